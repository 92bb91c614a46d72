// Mamba2Layer. Tested by tests/model/mamba2_model_test.cc.
#include "model/mamba2_layer.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "backend/cpu/kernels/ops.h"
#include "backend/cpu/kernels/short_conv.h"
#include "model/state_replay.h"

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
  replay_conv_.resize(static_cast<size_t>(conv_dim_));
  replay_out_.resize(static_cast<size_t>(num_threads) * static_cast<size_t>(head_dim_));
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

// Log row: [raw conv input | x B C after the conv | dt].
int64_t Mamba2Layer::log_floats(const ModelHParams& hp) {
  return 2 * static_cast<int64_t>(hp.conv_dim()) + static_cast<int64_t>(hp.ssm_time_step_rank);
}

void Mamba2Layer::replay(const LayerWeights& l, int32_t rlayer, StateSlotId slot, cpu::RecurrentState& state) {
  StepSeq s;
  s.state_slot = slot;
  conv_seq(l.mamba, rlayer, s, 0, conv_dim_, state);
  for (int32_t h = 0; h < num_heads_; ++h) scan_head(l.mamba, rlayer, s, h, 0, state);
}

// Threads split the channels; each sequence's rows convolve with its own state.
void Mamba2Layer::conv(cpu::ThreadCtx& ctx, const Mamba2Weights& w, int32_t rlayer, const StepPlan& plan,
                       cpu::RecurrentState& state) {
  const auto [c0, c1] = ctx.split(conv_dim_, 16);
  if (c0 < c1) {
    for (const StepSeq& s : plan.seqs) conv_seq(w, rlayer, s, c0, c1, state);
  }
  ctx.barrier();
}

// A verify seq also logs its convolved rows but the last.
void Mamba2Layer::conv_seq(const Mamba2Weights& w, int32_t rlayer, const StepSeq& s, int64_t c0, int64_t c1,
                           cpu::RecurrentState& state) {
  const ConvChannels ch{d_conv_, conv_dim_, c0, c1, state.layout().log_floats};
  const auto row = static_cast<int64_t>(s.row_begin);
  float* xbc = &xbc_[static_cast<size_t>(row * conv_dim_)];
  convolve_seq(state, s, rlayer, ch, &proj_[static_cast<size_t>(row * proj_dim_ + inner_)], proj_dim_, xbc,
               conv_dim_, replay_conv_.data(),
               [&](const float* x, int64_t x_stride, int64_t n, float* st, float* out, int64_t out_stride) {
                 cpu::short_conv_silu(x, x_stride, n, conv_dim_, c0, c1, w.conv, d_conv_, st, out, out_stride,
                                      w.conv_bias);
               });
  if (!s.state_checkpoints) return;
  float* log = state.step_log(*s.state_slot, rlayer);
  for (int32_t r = 0; r + 1 < s.num_rows; ++r) {
    std::memcpy(log + r * ch.log_floats + conv_dim_ + c0, xbc + r * conv_dim_ + c0,
                static_cast<size_t>(c1 - c0) * sizeof(float));
  }
}

// Work items are (sequence, head) pairs, split between the threads.
void Mamba2Layer::scan(cpu::ThreadCtx& ctx, const Mamba2Weights& w, int32_t rlayer, const StepPlan& plan,
                       cpu::RecurrentState& state) {
  const auto num_items = static_cast<int64_t>(plan.seqs.size()) * num_heads_;
  const auto [i0, i1] = ctx.split(num_items);
  for (int64_t item = i0; item < i1; ++item) {
    const StepSeq& s = plan.seqs[static_cast<size_t>(item / num_heads_)];
    scan_head(w, rlayer, s, static_cast<int32_t>(item % num_heads_), ctx.ith(), state);
  }
  ctx.barrier();
}

void Mamba2Layer::scan_head(const Mamba2Weights& w, int32_t rlayer, const StepSeq& s, int32_t h, int thread,
                            cpu::RecurrentState& state) {
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
  const int64_t head_floats = static_cast<int64_t>(head_dim_) * d_state_;
  float* st = state.ssm(*s.state_slot, rlayer) + h * head_floats;
  if (s.state_checkpoints) {  // dt of the rows but the last to the log
    float* log = state.step_log(*s.state_slot, rlayer);
    for (int32_t r = 0; r + 1 < s.num_rows; ++r) {
      log[r * state.layout().log_floats + 2 * conv_dim_ + h] = in.dt[r * in.dt_stride];
    }
  }
  const auto replay = [&](const float* log_row) {  // a log row's x B C and dt
    cpu::SsmScanRows r = in;
    r.x = log_row + conv_dim_ + static_cast<int64_t>(h) * head_dim_;
    r.b = log_row + conv_dim_ + inner_ + g * d_state_;
    r.c = log_row + conv_dim_ + inner_ + (num_groups_ + g) * d_state_;
    r.dt = log_row + 2 * conv_dim_ + h;
    r.y = &replay_out_[static_cast<size_t>(thread) * static_cast<size_t>(head_dim_)];
    cpu::ssm_scan_recurrent(r, 1, head_dim_, d_state_, st);
  };
  advance_head(
      state, s, rlayer, h * head_floats, head_floats, st, replay,
      [&](int32_t r) { cpu::ssm_scan_recurrent(cpu::rows_from(in, r), 1, head_dim_, d_state_, st); },
      [&] {
        if (chunked_ && s.num_rows >= kMinScanChunkedRows) {
          cpu::ssm_scan_chunked(in, s.num_rows, head_dim_, d_state_, st, scratch_[static_cast<size_t>(thread)]);
        } else {
          cpu::ssm_scan_recurrent(in, s.num_rows, head_dim_, d_state_, st);
        }
      });
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
