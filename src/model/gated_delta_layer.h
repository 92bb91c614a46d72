// GatedDeltaLayer: the linear-attention mixer of a Qwen3.5-class layer (a
// gated delta net), run by every thread of a WorkerPool job over a step's
// rows. For input rows xn (already RMS-normed):
//   qkv = attn_qkv·xn, z = attn_gate·xn, beta = sigmoid(ssm_beta·xn),
//   g = softplus(ssm_alpha·xn + dt_bias)·ssm_a (the log decay, ≤ 0)
//   (qwen3next: beta and alpha unpacked from ssm_ba·xn);
//   the causal short conv over qkv's channels with the sequence's rolling
//   conv state, then SiLU; q and k L2-normalised per key head; the gated
//   delta rule per value head h (reading key head hp.key_head(h)) on the
//   sequence's SSM state; each head's output RMS-normed with ssm_norm and
//   gated by silu(z); out = ssm_out · that.
// Every row runs the recurrent form of the rule, token by token, so a
// sequence's state is the same bits however its rows were cut into steps;
// with `chunked` a sequence's prefill rows (8 or more in a step) run the
// chunked form instead (faster, equal to float rounding only). Either way the
// state after the step is the state after the sequence's last row.
// Verify steps log each row's raw conv input, its convolved q, k, v and its
// g and beta (log_floats per row; state_replay.h); a later step replays them.
// Invariants: scratch is sized at construction for max_rows rows and
// num_threads threads; run() allocates nothing.
// Threading: run() is called by every thread of one job (it ends with a
// barrier). Tested by tests/model/qwen35_model_test.cc.
#pragma once

#include <cstdint>
#include <vector>

#include "backend/cpu/kernels/gated_delta.h"
#include "backend/cpu/recurrent_state.h"
#include "backend/cpu/worker_pool.h"
#include "backend/step_plan.h"
#include "model/hparams.h"
#include "model/linear.h"
#include "model/model.h"

namespace met {

class GatedDeltaLayer {
 public:
  GatedDeltaLayer() = default;
  GatedDeltaLayer(const ModelHParams& hp, int32_t max_rows, int num_threads, bool chunked);

  // out (rows × embd) = the mixer of layer weights `l` over xn (rows ×
  // embd), advancing each sequence's state of recurrent layer `rlayer`.
  // REQUIRES: every seq of `plan` names a state slot of `state`.
  void run(cpu::ThreadCtx& ctx, const LayerWeights& l, int32_t rlayer, const StepPlan& plan, const float* xn,
           cpu::RecurrentState& state, ActivationBuffers& act, float* out);
  // Replays the rows the step begun on `slot` replays (a zero-row step:
  // ForwardPass::materialize_state), on one thread.
  void replay(const LayerWeights& l, int32_t rlayer, StateSlotId slot, cpu::RecurrentState& state);
  // Floats of a replay log row (RecurrentLayout::log_floats).
  static int64_t log_floats(const ModelHParams& hp);

 private:
  void conv(cpu::ThreadCtx& ctx, const GatedDeltaWeights& w, int32_t rlayer, const StepPlan& plan,
            cpu::RecurrentState& state);
  void conv_seq(const GatedDeltaWeights& w, int32_t rlayer, const StepSeq& s, int64_t c0, int64_t c1,
                cpu::RecurrentState& state);
  void prepare_heads(cpu::ThreadCtx& ctx, const GatedDeltaWeights& w, int32_t rlayer, const StepPlan& plan,
                     cpu::RecurrentState& state);
  // A verify seq's rows in [r0, r1) but its last: convolved q, k, v, g, beta to the log.
  void log_heads(int32_t rlayer, const StepPlan& plan, int64_t r0, int64_t r1, cpu::RecurrentState& state);
  void delta_rule(cpu::ThreadCtx& ctx, int32_t rlayer, const StepPlan& plan, cpu::RecurrentState& state);
  void delta_head(int32_t rlayer, const StepSeq& s, int32_t h, int thread, cpu::RecurrentState& state);
  void gated_norm(cpu::ThreadCtx& ctx, const GatedDeltaWeights& w, int64_t rows);

  int64_t embd_ = 0, conv_dim_ = 0, key_dim_ = 0, value_dim_ = 0;
  int32_t head_dim_ = 0, num_k_heads_ = 0, num_v_heads_ = 0, d_conv_ = 0;
  float eps_ = 0.0f;
  bool grouped_v_heads_ = false;  // hp.ssm_grouped_v_heads
  bool chunked_ = false;
  // Rows × conv_dim (projected, then convolved), × value_dim (z, core), × v_heads.
  std::vector<float> qkv_, conv_out_, z_, beta_, gate_, core_;
  std::vector<float> ba_;  // rows × 2 v_heads: ssm_ba·xn (qwen3next only)
  std::vector<cpu::GatedDeltaScratch> scratch_;  // one per thread (chunked only)
  // Replayed rows' outputs, thrown away: one conv row; head_dim per thread.
  std::vector<float> replay_conv_, replay_out_;
};

}  // namespace met
