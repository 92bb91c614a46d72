// GatedDeltaLayer. Tested by tests/model/qwen35_model_test.cc.
#include "model/gated_delta_layer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "backend/cpu/kernels/ops.h"
#include "backend/cpu/kernels/short_conv.h"
#include "model/state_replay.h"

namespace met {
namespace {

// Rows of a sequence from which prefill runs the chunked form of the rule.
constexpr int32_t kChunkRows = 64;
constexpr int32_t kMinChunkedRows = 8;

// ggml's softplus: log(1 + e^x), x itself past 20 where they agree in float.
float softplus(float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); }
float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

}  // namespace

GatedDeltaLayer::GatedDeltaLayer(const ModelHParams& hp, int32_t max_rows, int num_threads, bool chunked)
    : embd_(hp.embedding_length),
      conv_dim_(hp.conv_dim()),
      key_dim_(static_cast<int64_t>(hp.ssm_group_count) * hp.ssm_state_size),
      value_dim_(hp.ssm_inner_size),
      head_dim_(static_cast<int32_t>(hp.ssm_state_size)),
      num_k_heads_(static_cast<int32_t>(hp.ssm_group_count)),
      num_v_heads_(static_cast<int32_t>(hp.ssm_time_step_rank)),
      d_conv_(static_cast<int32_t>(hp.ssm_conv_kernel)),
      eps_(hp.rms_norm_eps),
      grouped_v_heads_(hp.ssm_grouped_v_heads),
      chunked_(chunked) {
  const auto rows = static_cast<size_t>(max_rows);
  qkv_.resize(rows * static_cast<size_t>(conv_dim_));
  conv_out_.resize(rows * static_cast<size_t>(conv_dim_));
  z_.resize(rows * static_cast<size_t>(value_dim_));
  core_.resize(rows * static_cast<size_t>(value_dim_));
  beta_.resize(rows * static_cast<size_t>(num_v_heads_));
  gate_.resize(rows * static_cast<size_t>(num_v_heads_));
  if (hp.arch == "qwen3next") ba_.resize(rows * 2 * static_cast<size_t>(num_v_heads_));
  replay_conv_.resize(static_cast<size_t>(conv_dim_));
  replay_out_.resize(static_cast<size_t>(num_threads) * static_cast<size_t>(head_dim_));
  if (!chunked) return;
  scratch_.reserve(static_cast<size_t>(num_threads));
  for (int t = 0; t < num_threads; ++t) scratch_.emplace_back(kChunkRows, head_dim_);
}

void GatedDeltaLayer::run(cpu::ThreadCtx& ctx, const LayerWeights& l, int32_t rlayer, const StepPlan& plan,
                          const float* xn, cpu::RecurrentState& state, ActivationBuffers& act, float* out) {
  const GatedDeltaWeights& w = l.gdn;
  const int64_t rows = plan.num_rows();
  if (w.ba.data != nullptr) {
    const Product in[] = {{&w.wqkv, qkv_.data()}, {&w.wgate, z_.data()}, {&w.ba, ba_.data()}};
    linear(ctx, xn, rows, embd_, in, act);
  } else {
    const Product in[] = {{&w.wqkv, qkv_.data()}, {&w.wgate, z_.data()}, {&w.beta, beta_.data()},
                          {&w.alpha, gate_.data()}};
    linear(ctx, xn, rows, embd_, in, act);
  }
  conv(ctx, w, rlayer, plan, state);
  prepare_heads(ctx, w, rlayer, plan, state);
  delta_rule(ctx, rlayer, plan, state);
  gated_norm(ctx, w, rows);
  const Product o[] = {{&w.out, out}};
  linear(ctx, core_.data(), rows, value_dim_, o, act);
}

// Log row: [raw qkv | convolved, normalised qkv | g | beta].
int64_t GatedDeltaLayer::log_floats(const ModelHParams& hp) {
  return 2 * static_cast<int64_t>(hp.conv_dim()) + 2 * static_cast<int64_t>(hp.ssm_time_step_rank);
}

void GatedDeltaLayer::replay(const LayerWeights& l, int32_t rlayer, StateSlotId slot, cpu::RecurrentState& state) {
  StepSeq s;
  s.state_slot = slot;
  conv_seq(l.gdn, rlayer, s, 0, conv_dim_, state);
  for (int32_t h = 0; h < num_v_heads_; ++h) delta_head(rlayer, s, h, 0, state);
}

// Threads split the channels; each sequence's rows convolve with its own state.
void GatedDeltaLayer::conv(cpu::ThreadCtx& ctx, const GatedDeltaWeights& w, int32_t rlayer, const StepPlan& plan,
                           cpu::RecurrentState& state) {
  const auto [c0, c1] = ctx.split(conv_dim_, 16);
  if (c0 < c1) {
    for (const StepSeq& s : plan.seqs) conv_seq(w, rlayer, s, c0, c1, state);
  }
  ctx.barrier();
}

void GatedDeltaLayer::conv_seq(const GatedDeltaWeights& w, int32_t rlayer, const StepSeq& s, int64_t c0, int64_t c1,
                               cpu::RecurrentState& state) {
  const ConvChannels ch{d_conv_, conv_dim_, c0, c1, state.layout().log_floats};
  const auto at = static_cast<size_t>(static_cast<int64_t>(s.row_begin) * conv_dim_);
  convolve_seq(state, s, rlayer, ch, &qkv_[at], conv_dim_, &conv_out_[at], conv_dim_, replay_conv_.data(),
               [&](const float* x, int64_t x_stride, int64_t n, float* st, float* out, int64_t out_stride) {
                 cpu::short_conv_silu(x, x_stride, n, conv_dim_, c0, c1, w.conv, d_conv_, st, out, out_stride);
               });
}

// Per row: q and k heads L2-normalised, beta through a sigmoid, alpha into
// the log decay g (kept in gate_); ssm_ba's rows (per key head, its value
// heads' betas then alphas) unpacked first.
void GatedDeltaLayer::prepare_heads(cpu::ThreadCtx& ctx, const GatedDeltaWeights& w, int32_t rlayer,
                                    const StepPlan& plan, cpu::RecurrentState& state) {
  const auto [r0, r1] = ctx.split(plan.num_rows());
  const int32_t per_key = num_v_heads_ / num_k_heads_;
  for (int64_t r = r0; r < r1; ++r) {
    float* qk = &conv_out_[static_cast<size_t>(r * conv_dim_)];
    for (int32_t h = 0; h < 2 * num_k_heads_; ++h) cpu::l2_norm(qk + h * head_dim_, head_dim_, eps_);
    float* beta = &beta_[static_cast<size_t>(r * num_v_heads_)];
    float* g = &gate_[static_cast<size_t>(r * num_v_heads_)];
    if (w.ba.data != nullptr) {
      const float* ba = &ba_[static_cast<size_t>(r * 2 * num_v_heads_)];
      for (int32_t h = 0; h < num_v_heads_; ++h) {
        const int32_t at = 2 * per_key * (h / per_key) + h % per_key;
        beta[h] = ba[at];
        g[h] = ba[at + per_key];
      }
    }
    for (int32_t h = 0; h < num_v_heads_; ++h) {
      beta[h] = sigmoid(beta[h]);
      g[h] = softplus(g[h] + w.dt_bias[h]) * w.a[h];
    }
  }
  log_heads(rlayer, plan, r0, r1, state);
  ctx.barrier();
}

void GatedDeltaLayer::log_heads(int32_t rlayer, const StepPlan& plan, int64_t r0, int64_t r1,
                                cpu::RecurrentState& state) {
  const int64_t log_floats = state.layout().log_floats, nv = num_v_heads_;
  for (const StepSeq& s : plan.seqs) {
    if (!s.state_checkpoints) continue;
    float* log = state.step_log(*s.state_slot, rlayer);
    for (int64_t r = std::max<int64_t>(r0, s.row_begin); r < std::min<int64_t>(r1, s.row_begin + s.num_rows - 1);
         ++r) {
      float* row = log + (r - s.row_begin) * log_floats + conv_dim_;
      std::memcpy(row, &conv_out_[static_cast<size_t>(r * conv_dim_)], static_cast<size_t>(conv_dim_) * sizeof(float));
      std::memcpy(row + conv_dim_, &gate_[static_cast<size_t>(r * nv)], static_cast<size_t>(nv) * sizeof(float));
      std::memcpy(row + conv_dim_ + nv, &beta_[static_cast<size_t>(r * nv)], static_cast<size_t>(nv) * sizeof(float));
    }
  }
}

// Work items are (sequence, value head) pairs, split between the threads.
void GatedDeltaLayer::delta_rule(cpu::ThreadCtx& ctx, int32_t rlayer, const StepPlan& plan,
                                 cpu::RecurrentState& state) {
  const auto num_items = static_cast<int64_t>(plan.seqs.size()) * num_v_heads_;
  const auto [i0, i1] = ctx.split(num_items);
  for (int64_t item = i0; item < i1; ++item) {
    const StepSeq& s = plan.seqs[static_cast<size_t>(item / num_v_heads_)];
    delta_head(rlayer, s, static_cast<int32_t>(item % num_v_heads_), ctx.ith(), state);
  }
  ctx.barrier();
}

void GatedDeltaLayer::delta_head(int32_t rlayer, const StepSeq& s, int32_t h, int thread, cpu::RecurrentState& state) {
  const int32_t kh = grouped_v_heads_ ? h / (num_v_heads_ / num_k_heads_) : h % num_k_heads_;
  const int64_t row = s.row_begin;
  const float* base = &conv_out_[static_cast<size_t>(row * conv_dim_)];
  cpu::GatedDeltaRows in;
  in.q = base + static_cast<int64_t>(kh) * head_dim_;
  in.k = base + key_dim_ + static_cast<int64_t>(kh) * head_dim_;
  in.v = base + 2 * key_dim_ + static_cast<int64_t>(h) * head_dim_;
  in.q_stride = in.k_stride = in.v_stride = conv_dim_;
  in.g = &gate_[static_cast<size_t>(row * num_v_heads_ + h)];
  in.beta = &beta_[static_cast<size_t>(row * num_v_heads_ + h)];
  in.gb_stride = num_v_heads_;
  in.out = &core_[static_cast<size_t>(row * value_dim_ + static_cast<int64_t>(h) * head_dim_)];
  in.out_stride = value_dim_;
  const int64_t head_floats = static_cast<int64_t>(head_dim_) * head_dim_;
  float* st = state.ssm(*s.state_slot, rlayer) + h * head_floats;
  const auto replay = [&](const float* log_row) {  // a log row's q, k, v, g, beta (log_floats)
    const float* qkv = log_row + conv_dim_;
    cpu::GatedDeltaRows r;
    r.q = qkv + static_cast<int64_t>(kh) * head_dim_;
    r.k = qkv + key_dim_ + static_cast<int64_t>(kh) * head_dim_;
    r.v = qkv + 2 * key_dim_ + static_cast<int64_t>(h) * head_dim_;
    r.g = qkv + conv_dim_ + h;
    r.beta = qkv + conv_dim_ + num_v_heads_ + h;
    r.out = &replay_out_[static_cast<size_t>(thread) * static_cast<size_t>(head_dim_)];
    cpu::gated_delta_recurrent(r, 1, head_dim_, st);
  };
  advance_head(
      state, s, rlayer, h * head_floats, head_floats, st, replay,
      [&](int32_t r) { cpu::gated_delta_recurrent(cpu::rows_from(in, r), 1, head_dim_, st); },
      [&] {
        if (chunked_ && s.num_rows >= kMinChunkedRows) {
          cpu::gated_delta_chunked(in, s.num_rows, head_dim_, st, scratch_[static_cast<size_t>(thread)]);
        } else {
          cpu::gated_delta_recurrent(in, s.num_rows, head_dim_, st);
        }
      });
}

void GatedDeltaLayer::gated_norm(cpu::ThreadCtx& ctx, const GatedDeltaWeights& w, int64_t rows) {
  const auto [r0, r1] = ctx.split(rows);
  for (int64_t r = r0; r < r1; ++r) {
    for (int32_t h = 0; h < num_v_heads_; ++h) {
      const int64_t at = r * value_dim_ + static_cast<int64_t>(h) * head_dim_;
      cpu::rms_norm_gated(&core_[static_cast<size_t>(at)], w.norm, &z_[static_cast<size_t>(at)], head_dim_, eps_,
                          &core_[static_cast<size_t>(at)]);
    }
  }
  ctx.barrier();
}

}  // namespace met
