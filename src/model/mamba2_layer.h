// Mamba2Layer: the Mamba2 mixer of a granitehybrid / nemotron_h layer
// (llama.cpp's build_mamba2_layer), run by every thread of a WorkerPool job
// over a step's rows. For input rows xn (already RMS-normed):
//   [z | xBC | dt] = ssm_in · xn;
//   xBC = silu(causal short conv over its conv_dim channels (x, B, C) with
//         the sequence's rolling conv state, + ssm_conv1d.bias);
//   y = the selective scan per head h on the sequence's SSM state (x's head
//       h, B and C of group h / (heads / groups), dt + dt_bias, ssm_a, and
//       the D skip ssm_d);
//   y = y ⊙ silu(z), then RMS-normed over each group's d_inner / groups
//       values with ssm_norm (llama.cpp gates first, then norms);
//   out = ssm_out · y.
// Every row runs the recurrent form of the scan, token by token, so a
// sequence's state is the same bits however its rows were cut into steps;
// with `chunked` a sequence's prefill rows (8 or more in a step) run the
// chunked (SSD) form instead: faster, equal to float rounding only. Either
// way the state after the step is the state after the sequence's last row.
// Invariants: scratch is sized at construction for max_rows rows and
// num_threads threads; run() allocates nothing.
// Threading: run() is called by every thread of one job (it ends with a
// barrier). Tested by tests/model/mamba2_model_test.cc.
#pragma once

#include <cstdint>
#include <vector>

#include "backend/cpu/kernels/ssm_scan.h"
#include "backend/cpu/recurrent_state.h"
#include "backend/cpu/worker_pool.h"
#include "backend/step_plan.h"
#include "model/hparams.h"
#include "model/linear.h"
#include "model/model.h"

namespace met {

class Mamba2Layer {
 public:
  Mamba2Layer() = default;
  Mamba2Layer(const ModelHParams& hp, int32_t max_rows, int num_threads, bool chunked);

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
  void conv(cpu::ThreadCtx& ctx, const Mamba2Weights& w, int32_t rlayer, const StepPlan& plan,
            cpu::RecurrentState& state);
  void conv_seq(const Mamba2Weights& w, int32_t rlayer, const StepSeq& s, int64_t c0, int64_t c1,
                cpu::RecurrentState& state);
  void scan(cpu::ThreadCtx& ctx, const Mamba2Weights& w, int32_t rlayer, const StepPlan& plan,
            cpu::RecurrentState& state);
  void scan_head(const Mamba2Weights& w, int32_t rlayer, const StepSeq& s, int32_t h, int thread,
                 cpu::RecurrentState& state);
  void gated_norm(cpu::ThreadCtx& ctx, const Mamba2Weights& w, int64_t rows);

  int64_t embd_ = 0, inner_ = 0, conv_dim_ = 0, proj_dim_ = 0;
  int32_t head_dim_ = 0, num_heads_ = 0, num_groups_ = 0, d_state_ = 0, d_conv_ = 0;
  float eps_ = 0.0f;
  bool chunked_ = false;
  // Rows × proj_dim (ssm_in's output), × conv_dim (x B C after the conv), × d_inner (y).
  std::vector<float> proj_, xbc_, y_;
  std::vector<cpu::SsmScanScratch> scratch_;  // one per thread (chunked only)
  // Replayed rows' outputs, thrown away: one conv row; head_dim per thread.
  std::vector<float> replay_conv_, replay_out_;
};

}  // namespace met
