// Mamba2Layer. Tested by tests/model/mamba2_model_test.cc.
#include "model/mamba2_layer.h"

#include <cstring>
#include <utility>

#include "backend/cpu/kernels/ops.h"
#include "backend/cpu/kernels/short_conv.h"
#include "model/state_checkpoints.h"

namespace met {
namespace {

// Rows of a sequence from which prefill runs the chunked form of the scan.
constexpr int32_t kScanChunkRows = 64;
constexpr int32_t kMinScanChunkedRows = 8;

}  // namespace

Mamba2Layer::Mamba2Layer(const ModelHParams& hp, int32_t max_rows, int num_threads, bool chunked)
    : embd_(hp.embedding_length),
      inner_(hp.ssm_inner_size),
      conv_dim_(hp.conv_dim()),
      proj_dim_(hp.mamba_in_proj_dim()),
      head_dim_(static_cast<int32_t>(hp.mamba_head_dim())),
      num_heads_(static_cast<int32_t>(hp.ssm_time_step_rank)),
      num_groups_(static_cast<int32_t>(hp.ssm_group_count)),
      d_state_(static_cast<int32_t>(hp.ssm_state_size)),
      d_conv_(static_cast<int32_t>(hp.ssm_conv_kernel)),
      eps_(hp.rms_norm_eps),
      chunked_(chunked) {
  const auto rows = static_cast<size_t>(max_rows);
  proj_.resize(rows * static_cast<size_t>(proj_dim_));
  xbc_.resize(rows * static_cast<size_t>(conv_dim_));
  y_.resize(rows * static_cast<size_t>(inner_));
  if (!chunked) return;
  scratch_.reserve(static_cast<size_t>(num_threads));
  for (int t = 0; t < num_threads; ++t) scratch_.emplace_back(kScanChunkRows, head_dim_, d_state_);
}

void Mamba2Layer::run(cpu::ThreadCtx& ctx, const LayerWeights& l, int32_t rlayer, const StepPlan& plan,
                      const float* xn, cpu::RecurrentState& state, ActivationBuffers& act, float* out) {
  const Mamba2Weights& w = l.mamba;
  const int64_t rows = plan.num_rows();
  const Product in[] = {{&w.in, proj_.data()}};
  linear(ctx, xn, rows, embd_, in, act);
  conv(ctx, w, rlayer, plan, state);
  scan(ctx, w, rlayer, plan, state);
  gated_norm(ctx, w, rows);
  const Product o[] = {{&w.out, out}};
  linear(ctx, y_.data(), rows, inner_, o, act);
}

// Threads split the channels; each sequence's rows convolve with its own state.
void Mamba2Layer::conv(cpu::ThreadCtx& ctx, const Mamba2Weights& w, int32_t rlayer, const StepPlan& plan,
                       cpu::RecurrentState& state) {
  // Named, not a structured binding: the lambda below captures them.
  const std::pair<int64_t, int64_t> channels = ctx.split(conv_dim_, 16);
  const int64_t c0 = channels.first, c1 = channels.second;
  if (c0 < c1) {
    for (const StepSeq& s : plan.seqs) {
      convolve_seq(state, s, rlayer, d_conv_, conv_dim_, c0, c1, [&](int32_t r, int32_t n, float* st) {
        const auto row = static_cast<int64_t>(s.row_begin + r);
        cpu::short_conv_silu(&proj_[static_cast<size_t>(row * proj_dim_ + inner_)], proj_dim_, n, conv_dim_, c0, c1,
                             w.conv, d_conv_, st, &xbc_[static_cast<size_t>(row * conv_dim_)], conv_dim_,
                             w.conv_bias);
      });
    }
  }
  ctx.barrier();
}

// Work items are (sequence, head) pairs, split between the threads.
void Mamba2Layer::scan(cpu::ThreadCtx& ctx, const Mamba2Weights& w, int32_t rlayer, const StepPlan& plan,
                       cpu::RecurrentState& state) {
  const auto num_items = static_cast<int64_t>(plan.seqs.size()) * num_heads_;
  const auto [i0, i1] = ctx.split(num_items);
  const int64_t head_floats = static_cast<int64_t>(head_dim_) * d_state_;
  for (int64_t item = i0; item < i1; ++item) {
    const StepSeq& s = plan.seqs[static_cast<size_t>(item / num_heads_)];
    const auto h = static_cast<int32_t>(item % num_heads_);
    const int64_t g = cpu::ssm_group_of_head(h, num_heads_, num_groups_);
    const auto row = static_cast<int64_t>(s.row_begin);
    const float* xbc = &xbc_[static_cast<size_t>(row * conv_dim_)];
    cpu::SsmScanRows in;
    in.x = xbc + static_cast<int64_t>(h) * head_dim_;
    in.b = xbc + inner_ + g * d_state_;
    in.c = xbc + inner_ + (num_groups_ + g) * d_state_;
    in.x_stride = in.b_stride = in.c_stride = conv_dim_;
    in.dt = &proj_[static_cast<size_t>(row * proj_dim_ + inner_ + conv_dim_ + h)];
    in.dt_stride = proj_dim_;
    in.dt_bias = w.dt_bias[h];
    in.a = w.a[h];
    in.d = w.d[h];
    in.y = &y_[static_cast<size_t>(row * inner_ + static_cast<int64_t>(h) * head_dim_)];
    in.y_stride = inner_;
    float* st = state.ssm(*s.state_slot, rlayer) + h * head_floats;
    // A rewindable slot's step writes another version than it reads: the
    // head's state is copied over here, where the scan reads it from cache.
    if (const float* src = state.ssm_source(*s.state_slot, rlayer)) {
      std::memcpy(st, src + h * head_floats, static_cast<size_t>(head_floats) * sizeof(float));
    }
    if (s.state_checkpoints) {
      advance_rows_with_checkpoints(state, s, rlayer, h * head_floats, head_floats, st, [&](int32_t r) {
        cpu::ssm_scan_recurrent(cpu::rows_from(in, r), 1, head_dim_, d_state_, st);
      });
    } else if (chunked_ && s.num_rows >= kMinScanChunkedRows) {
      cpu::ssm_scan_chunked(in, s.num_rows, head_dim_, d_state_, st, scratch_[static_cast<size_t>(ctx.ith())]);
    } else {
      cpu::ssm_scan_recurrent(in, s.num_rows, head_dim_, d_state_, st);
    }
  }
  ctx.barrier();
}

// y ⊙ silu(z), then each group's RMS norm with its slice of ssm_norm.
void Mamba2Layer::gated_norm(cpu::ThreadCtx& ctx, const Mamba2Weights& w, int64_t rows) {
  const int64_t group = inner_ / num_groups_;
  const auto [r0, r1] = ctx.split(rows);
  for (int64_t r = r0; r < r1; ++r) {
    float* y = &y_[static_cast<size_t>(r * inner_)];
    cpu::swiglu(&proj_[static_cast<size_t>(r * proj_dim_)], y, inner_, y);
    for (int32_t g = 0; g < num_groups_; ++g) {
      cpu::rms_norm(y + g * group, w.norm + g * group, group, eps_, y + g * group);
    }
  }
  ctx.barrier();
}

}  // namespace met
