// MoeFfn: the mixture-of-experts FFN of one layer over a step's rows, run by
// every thread of a WorkerPool job:
//   1. every input prepared from the rows once (router, shared gate, one
//      per expert weight type), then router logits (and the shared expert's
//      gate logit, unless the shared expert is ungated) for every row;
//   2. routing (router bias if any; softmax, top-k, renormalised weights, or
//      gpt-oss's top-k then softmax), a stable counting sort of the (row,
//      choice) pairs by expert, and the prepared rows gathered into group
//      order: on thread 0 alone for a few slots (decode), else split;
//   3. per chosen expert, one matmul of its gate and up matrices over its
//      group (each thread takes a share of the output columns), each thread
//      then adding the biases and applying SwiGLU (or gpt-oss's clamped
//      variant) to its own columns; then the down matrices (plus their
//      biases) split the same way;
//   4. the shared expert, if any, as a dense SwiGLU FFN;
//   5. per row, its k expert outputs scaled by the routing weights and summed
//      in choice order, plus sigmoid(gate) × the shared expert's output (or
//      that output itself: granitehybrid's ungated shared expert).
// Seven barriers a layer without a shared expert at decode (before routing
// ran on one thread and biases and activation joined the matmuls: nine, ten
// with gpt-oss's down biases).
// An expert no row chose is never read: batch 1 reads k experts' weights.
// Invariants: scratch is sized at construction for max_rows rows; run()
// allocates nothing. A row's output depends only on that row.
// Threading: run() is called by every thread of one job; one job at a time.
// Tested by tests/model/moe_ffn_test.cc and, whole, by cpu_device_test.cc.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "backend/cpu/worker_pool.h"
#include "model/hparams.h"
#include "model/linear.h"
#include "model/model.h"

namespace met {

class MoeFfn {
 public:
  MoeFfn() = default;
  // REQUIRES: hp.is_moe().
  MoeFfn(const ModelHParams& hp, int64_t max_rows);

  // out (rows × embd) = the MoE FFN of xn (rows × embd, normalized input).
  // Before its first barrier a thread reads only its own rows of xn
  // (ThreadCtx::split), so the op writing them needs no barrier of its own.
  // REQUIRES: rows <= max_rows; w matches the hyper-parameters.
  void run(cpu::ThreadCtx& ctx, const MoeWeights& w, const float* xn, int64_t rows, float* out);
  // The last run()'s groups: expert e took offsets[e + 1] - offsets[e] of its
  // (row, choice) pairs (experts + 1 entries). Stable from run()'s return to
  // the next run(); only thread 0 of the job writes them (expert load counts).
  std::span<const int32_t> group_offsets() const { return offsets_; }

 private:
  void route(cpu::ThreadCtx& ctx, const MoeWeights& w, const float* xn, int64_t rows);
  // Router bias, top-k and weights of rows [r0, r1).
  void route_rows(const MoeWeights& w, int64_t r0, int64_t r1);
  // Prepared rows into slot order, slots [s0, s1).
  void gather_slots(const MoeWeights& w, int64_t s0, int64_t s1);
  void run_experts(cpu::ThreadCtx& ctx, const MoeWeights& w, int64_t rows);
  // Expert e's gate/up biases and the activation, into gate_, for its slots
  // [begin, begin + m) and columns [c0, c1).
  void activate(const MoeWeights& w, int64_t e, int64_t begin, int64_t m, int64_t c0, int64_t c1);
  void run_shared(cpu::ThreadCtx& ctx, const MoeWeights& w, const float* xn, int64_t rows);
  void combine(cpu::ThreadCtx& ctx, const MoeWeights& w, int64_t rows, float* out);

  int32_t num_experts_ = 0;
  int32_t k_ = 0;
  int64_t embd_ = 0, ff_ = 0, shared_ff_ = 0;
  size_t embd_act_bytes_ = 0, ff_act_bytes_ = 0;
  ActivationBuffers act_;                   // router and shared-expert inputs
  std::vector<float> logits_;               // rows × (experts + 1): the last column is the shared gate
  std::vector<int32_t> ids_;                // rows × k
  std::vector<float> weights_;              // rows × k
  std::vector<int32_t> offsets_;            // experts + 1
  std::vector<int32_t> slot_row_, pair_slot_;
  std::vector<uint8_t> act_rows_[2];        // rows, prepared for the gate / up types
  std::vector<uint8_t> act_slots_[2];       // the same, in slot order (rows × k)
  std::vector<uint8_t> act_down_;           // SwiGLU outputs prepared for down (rows × k)
  std::vector<float> gate_, up_, down_;     // per slot: ff, ff, embd
  std::vector<float> sh_gate_, sh_up_, sh_down_;  // per row
};

}  // namespace met
