// EncoderPass: one forward step of a BERT-family encoder (bert,
// nomic-bert) over a StepPlan, run by every thread of a WorkerPool job in
// lockstep like ForwardPass. Each seq of a step is a whole input (num_cached
// 0, as validate_model_outputs requires of a model without causal
// attention): a row's embedding is its token's, plus token type 0's row and
// (bert) its position's row, then LayerNorm; each layer attends over every
// row of its seq (K and V stored in the paged KV cache, read back by
// paged_attention with AttnSeq::causal false; nomic-bert rotates Q and K
// NeoX-wise first), adds the output projection (and its bias) to the
// residual and LayerNorms the sum; then the FFN (bert: gelu(up x + b) with
// ffn_down's bias; nomic-bert: SwiGLU), residual add and LayerNorm again.
// The last layer's rows are the hidden states: every output is a hidden one
// (hidden_outputs.h); there is no head.
// Invariants: scratch sized at construction for ForwardLimits; run()
// allocates nothing. A row's results depend only on its own sequence.
// Threading: run() from every thread of one job. Tested by
// tests/model/encoder_model_test.cc.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "backend/cpu/kernels/attention.h"
#include "backend/cpu/kv_cache.h"
#include "backend/cpu/worker_pool.h"
#include "backend/step_plan.h"
#include "model/forward_pass.h"
#include "model/linear.h"
#include "model/model.h"

namespace met {

class EncoderPass {
 public:
  // REQUIRES: model.traits().encoder; kv has the model's layers.
  EncoderPass(const Model& model, cpu::KvCache& kv, ForwardLimits limits, int num_threads);

  const ForwardLimits& limits() const { return limits_; }
  void prepare_result(const StepPlan& plan, StepResult& result) const;
  // REQUIRES: validate_plan and validate_model_outputs passed; tokens holds
  // one token per row.
  void run(cpu::ThreadCtx& ctx, const StepPlan& plan, std::span<const TokenId> tokens, StepResult& result);

 private:
  void embed(cpu::ThreadCtx& ctx, const StepPlan& plan, std::span<const TokenId> tokens);
  void attention_block(cpu::ThreadCtx& ctx, int layer, const StepPlan& plan);
  void ffn_block(cpu::ThreadCtx& ctx, int layer, int64_t rows);
  // x = layer_norm(x + tmp_ [+ bias]) by (w, b).
  void add_and_norm(cpu::ThreadCtx& ctx, int64_t rows, const float* bias, const float* w, const float* b);

  const Model& model_;
  cpu::KvCache& kv_;
  ForwardLimits limits_;
  cpu::RopeParams rope_;
  float attn_scale_;
  std::vector<float> x_, q_, k_, v_, attn_out_, tmp_, gate_, up_;
  ActivationBuffers act_;
  std::vector<cpu::AttnSeq> attn_seqs_;
  cpu::AttentionScratch attn_scratch_;
};

}  // namespace met
