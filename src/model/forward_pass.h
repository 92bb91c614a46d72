// ForwardPass: one forward step of the llama-family transformer over a
// StepPlan, run by every thread of a WorkerPool job in lockstep: each op is
// split by rows (norms, RoPE, element-wise) or by output columns (matrix
// products, so each weight row is read once per step for the whole batch),
// with a barrier between dependent ops. K and V of the step's rows are written
// into the paged KV cache before attention reads it through the block tables.
// A MoE model's FFN is MoeFfn (moe_ffn.h). gpt-oss layers add the output
// bias, attend with sinks, and its windowed layers through their sliding
// window with their own rope base. Qwen3.5-class hybrids: a gated delta
// layer's mixer is GatedDeltaLayer (its state in the device's
// RecurrentState, by each seq's state slot); their attention layers project
// each head's Q with a gate, and multiply the head's output by the gate's
// sigmoid. Only attention layers have KV (the cache's layers are the model's
// attention layers in order). Mamba2 hybrids: a Mamba2 layer's mixer is
// Mamba2Layer (its state in the RecurrentState as a gated delta layer's);
// granite's scales multiply the embeddings, each block's output before its
// residual add, and divide the logits; attention_scale replaces
// 1/sqrt(head_dim); attention layers rotate only where hp.uses_rope;
// nemotron_h's layers have a mixer or an FFN (relu², no gate), not both.
// gemma3 and olmo2 normalise each block's output (post-norms) before its
// residual add; olmo2 has no pre-norms and norms Q and K whole; gemma3's FFN
// is GeGLU and its logits may be soft-capped; smollm3's every fourth layer
// does not rotate. gemma4 (forward_pass_gemma4.cc) runs each layer at its
// own head size and KV heads: the KV cache's rows are the widest layer's
// (hp.head_dim × hp.num_kv_heads); a narrower layer's heads are zero-padded
// and its KV heads repeated to fill them (query head h still reads cache
// head h / (heads / cache KV heads), which holds the layer's KV head for h),
// so one attention plan and kernel serve every layer and the zeros add
// nothing to a score or an output; its shared-KV layers read the cache
// layer of their source; V is normed per head without a weight (K's
// projection where the layer has no attn_v); per-layer embeddings and the
// layer output scale follow each layer's FFN.
// With ForwardOptions::mtp the model's first MTP block (nextn) runs after the
// trunk on every row: its input is the row's hidden state after output_norm
// and the embedding of the token after the row (the row's argmax where it
// has an output, else the next row's token), its attention layer's KV is the
// cache's last layer, and its head's argmax per output row is
// StepResult::mtp_argmax: the token it predicts two places past the row.
// A seq with StepSeq::mtp_chain then runs the block that many more times
// past its last row, fed the block's own guess and hidden state, its keys in
// scratch blocks (StepResult::mtp_chain).
// Invariants: all scratch is sized at construction for `max_rows` rows and
// `max_outputs` output rows; run() allocates nothing. A row's results depend
// only on its own sequence (batch invariance), never on its neighbours.
// Threading: run() is called by every thread of one job; the object is used by
// one job at a time. Tested by tests/model/cpu_device_test.cc and dense_archs_test.cc.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "backend/cpu/kernels/attention.h"
#include "backend/cpu/kv_cache.h"
#include "backend/cpu/recurrent_state.h"
#include "backend/cpu/worker_pool.h"
#include "backend/device.h"
#include "backend/step_plan.h"
#include "model/expert_load.h"
#include "model/gated_delta_layer.h"
#include "model/linear.h"
#include "model/mamba2_layer.h"
#include "model/model.h"
#include "model/moe_ffn.h"

namespace met {

struct ForwardLimits {
  int32_t max_rows = 512;     // rows (tokens) in one step
  int32_t max_outputs = 256;  // output rows in one step
  int32_t max_seqs = 256;     // sequences in one step
};

// Choices that trade exactness for speed.
struct ForwardOptions {
  // Gated delta layers run prefill rows through the chunked form of the rule
  // (faster on long prompts) instead of the recurrent form. Off, a row's
  // state and logits are the same bits however its prompt was cut into
  // chunks and whatever shared its steps (batch invariance, exact swap ==
  // recompute); on, they agree to float rounding only.
  bool chunked_delta_rule = false;
  // Mamba2 layers likewise run prefill rows through the chunked (SSD) form
  // of the selective scan; off, every row runs the recurrent form.
  bool chunked_ssm_scan = false;
  // Runs the model's first MTP block after the trunk (see above). REQUIRES:
  // nextn_predict_layers >= 1 and a KV cache with one layer past the
  // model's attention layers.
  bool mtp = false;
  // With mtp: the most drafts a seq's chain adds (StepSeq::mtp_chain: the
  // block fed its own guess and its own hidden state, one position further
  // each time), for at most mtp_chain_seqs seqs of a step (clamped to the
  // limits). Their keys go to scratch blocks past the scheduler's
  // (scratch_blocks()); the cache's own blocks are never written past a
  // step's rows.
  int32_t mtp_chain = 0;
  int32_t mtp_chain_seqs = 32;
  // LoRA adapters of rank up to this may run (prepare_adapters); 0: none.
  int32_t max_lora_rank = 0;
};

inline constexpr int32_t kMaxMtpChain = kMaxMtpDrafts - 1;

// The paged attention's scratch for a step of up to max_rows rows of a model
// of hp's heads (ForwardPass and EncoderPass).
cpu::AttentionScratch attention_scratch(const ModelHParams& hp, int32_t max_rows, int num_threads);

class ForwardPass {
 public:
  // `state` holds the recurrent layers' state (null for a model without).
  ForwardPass(const Model& model, cpu::KvCache& kv, cpu::RecurrentState* state, ForwardLimits limits,
              int num_threads, ForwardOptions options = {});

  const ForwardLimits& limits() const { return limits_; }
  // KV cache layers this pass writes: the attention layers, and the MTP
  // block's with ForwardOptions::mtp.
  static int32_t kv_layers(const Model& model, bool mtp);
  // KV blocks the pass uses as scratch for chained MTP drafts: the cache's
  // last ones, past the blocks plans may name.
  static int32_t scratch_blocks(const ForwardOptions& options, const ForwardLimits& limits);
  // (token, choice) pairs routed to each expert of each layer so far (MoE
  // models; no layers otherwise): thread 0 adds a layer's group sizes once
  // per step. Readable from any thread.
  const ExpertLoad& expert_load() const { return expert_load_; }

  // REQUIRES: validate_plan(plan) passed, plan within limits(), tokens holds
  // one resolved input token per row, result.logits has room for
  // outputs × vocab and result.argmax for outputs (see prepare_result).
  void run(cpu::ThreadCtx& ctx, const StepPlan& plan, std::span<const TokenId> tokens,
           StepResult& result);

  // Makes the plan's state restores, then readies each seq's state slot for
  // its rows (RecurrentState::begin_step: zeroes from token 0, the version
  // at num_cached otherwise). Before run(), on one thread; an error (no
  // state at a seq's num_cached) means run() must not be called.
  Status prepare_states(const StepPlan& plan);

  // Makes `slot`'s replayable state after `position` tokens (a verify
  // step's accepted prefix; cpu::RecurrentState::replayable) a version of
  // its own, for a spill image: each recurrent layer replays the logged
  // rows on this thread. Only while no step runs.
  Status materialize_state(StateSlotId slot, int64_t position);

  // The adapters of the plan's seqs (`slots[s]`: the adapter slot s held
  // at launch), grouped for the step's trunk layers and head: a seq's rows
  // add its adapter's updates to every matrix it adapts (not the MTP
  // block's). Before run(), on one thread. REQUIRES: every named slot has
  // an adapter of rank at most ForwardOptions::max_lora_rank.
  void prepare_adapters(const StepPlan& plan, std::span<const LoraAdapter* const> slots) {
    lora_.begin(plan, slots);
  }

  // Sizes `result` for `plan` (called by the launching thread before run()).
  void prepare_result(const StepPlan& plan, StepResult& result) const;

 private:
  void embed(cpu::ThreadCtx& ctx, std::span<const TokenId> tokens, int64_t rows);
  void attention_block(cpu::ThreadCtx& ctx, int layer, const StepPlan& plan);
  // Biases, q/k norms and rope of the rows' q (unless !with_q), k and v,
  // then k and v stored into the cache; ends with a barrier. The threads
  // split (row, q or k and v) units, so at batch 1 both have work.
  void qkv_post(cpu::ThreadCtx& ctx, int layer, const StepPlan& plan, bool with_q);
  void q_post(int layer, const StepPlan& plan, int64_t row);
  void kv_post(int layer, const StepPlan& plan, int64_t row);
  // Each thread's rows of the rope tables for `plan` (read after a barrier).
  void fill_rope_rows(cpu::ThreadCtx& ctx, const StepPlan& plan);
  // Rotates `heads` heads at x of `plan`'s row `row` in layer `layer`, by
  // the step's table when `plan` is the one it was filled for.
  void rope_row(float* x, int32_t heads, int layer, const StepPlan& plan, int64_t row) const;
  // What attention layer `layer` stores into the cache at the plan's rows,
  // and nothing else (its queries, attention, output and FFN skipped): the
  // same bits as attention_block's store. Ends with a barrier.
  void store_kv_only(cpu::ThreadCtx& ctx, int layer, const StepPlan& plan);
  // Gated attention: q_ and attn_gate_ from the rows of per-head [Q | gate].
  void split_q_gate(int64_t r0, int64_t r1);
  void apply_attn_gate(cpu::ThreadCtx& ctx, int64_t rows);
  // Each thread copies its share of the first `floats` of recurrent layer
  // `rlayer`'s state (conv, then SSM) from the version each seq's step reads
  // into the one it writes (a rewindable slot).
  void sync_states(cpu::ThreadCtx& ctx, int32_t rlayer, const StepPlan& plan, int64_t floats);
  // Thread 0 makes the plan's state snapshots (after every layer).
  void take_snapshots(cpu::ThreadCtx& ctx, const StepPlan& plan);
  void ffn_block(cpu::ThreadCtx& ctx, int layer, int64_t rows);
  // gemma4 (forward_pass_gemma4.cc): the attention block at the layer's
  // sizes; per_layer_inputs_ for the step's rows; after the FFN, the
  // per-layer embedding's block and the layer output scale.
  void wide_attention_block(cpu::ThreadCtx& ctx, int layer, const StepPlan& plan);
  void wide_qkv_post(cpu::ThreadCtx& ctx, int layer, const StepPlan& plan);
  // Row r's compact K (and V) heads into k_ and v_ at the cache's width.
  void widen_kv_row(int layer, int64_t r);
  void per_layer_inputs(cpu::ThreadCtx& ctx, std::span<const TokenId> tokens, int64_t rows);
  void per_layer_block(cpu::ThreadCtx& ctx, int layer, int64_t rows);
  void relu2_ffn(cpu::ThreadCtx& ctx, int layer, int64_t rows);
  // x += tmp_ (normalised by `post_norm` first when not null).
  void add_residual(cpu::ThreadCtx& ctx, int64_t rows, const float* post_norm = nullptr);
  // xn_ = rms_norm(x_) by `norm`, or x_ itself when `norm` is null; then a
  // barrier, unless !`barrier`: the caller's next op reads only the rows
  // this thread wrote (input_feeds_own_rows()).
  void input_norm(cpu::ThreadCtx& ctx, const float* norm, int64_t rows, bool barrier = true);
  // Whether linear() with `lora` reads, before its first barrier, only each
  // thread's own rows of its input (ThreadCtx::split of the rows, as the row
  // ops here write them): true without adapters, whose shrink reads every
  // row. The norm or activation before such a linear() needs no barrier.
  static bool input_feeds_own_rows(const LoraCall& lora) { return lora.rows == nullptr; }
  void output(cpu::ThreadCtx& ctx, const StepPlan& plan, StepResult& result);
  // The trunk's layers, then the MTP block as layer num_layers.
  const LayerWeights& layer_weights(int layer) const;
  // The adapters' call for `layer`'s products (none for the MTP block's).
  LoraCall lora_for(int layer) const;
  // ForwardOptions::mtp: row_output_ and row_next_ (thread 0, before the trunk).
  void index_mtp_rows(const StepPlan& plan, std::span<const TokenId> tokens);
  // ForwardOptions::mtp: the MTP block over every row, its argmax per output.
  void run_mtp(cpu::ThreadCtx& ctx, const StepPlan& plan, StepResult& result);
  void mtp_inputs(cpu::ThreadCtx& ctx, const StepPlan& plan, const StepResult& result);
  // One row's MTP input `in` (2 × embd): [enorm(embedding of `next`);
  // hnorm(h)], h a hidden state after the output (or shared head) norm.
  void mtp_input_row(TokenId next, const float* h, float* in) const;
  void mtp_output(cpu::ThreadCtx& ctx, const StepPlan& plan, StepResult& result);
  // Chained MTP drafts (StepSeq::mtp_chain), after run_mtp.
  void run_mtp_chain(cpu::ThreadCtx& ctx, const StepPlan& plan, StepResult& result);
  // Thread 0: chain_ and chain_plan_'s seqs from `plan` (the scratch blocks
  // given their copy of each seq's partial last block).
  void begin_chain(const StepPlan& plan, const StepResult& result);
  // Thread 0: chain_plan_ and attn_seqs_ for chain step j (1-based); returns
  // the rows (seqs still chaining).
  int32_t chain_step_plan(int32_t j);
  void chain_inputs(cpu::ThreadCtx& ctx, int32_t rows);
  void chain_output(cpu::ThreadCtx& ctx, int32_t j, int32_t rows, StepResult& result);

  const Model& model_;
  cpu::KvCache& kv_;
  cpu::RecurrentState* state_;
  ForwardLimits limits_;
  // Per layer: its index among the KV cache's layers (attention layers) or
  // among the recurrent layers (gated delta or Mamba2 layers); 0 for an
  // FFN-only layer.
  std::vector<int32_t> kind_index_;
  cpu::RopeParams rope_;
  cpu::RopeParams rope_swa_;  // windowed layers (rope.freq_base_swa)
  // The step's rope tables: per row of rope_plan_, its position's
  // cpu::rope_table of rope_ ([0]) and, with windowed layers, rope_swa_
  // ([1]), filled once before the layers (every layer rotates by them).
  std::vector<float> rope_rows_[2];  // [1] empty without windowed layers
  const StepPlan* rope_plan_ = nullptr;
  float attn_scale_;
  // Scratch, row-major with the widths below.
  std::vector<float> x_, xn_, q_, k_, v_, attn_out_, tmp_, gate_, up_;
  std::vector<float> out_x_;  // normalized output rows
  std::vector<float> qg_, attn_gate_;  // gated attention: per-head [Q | gate] rows, and the gates
  bool mtp_ = false;                   // ForwardOptions::mtp
  std::vector<float> mtp_in_;          // MTP: per row [enorm(e); hnorm(h)]
  std::vector<float> mtp_logits_;      // MTP: per output row
  std::vector<int32_t> row_output_;    // MTP: per row, its output's index (-1: none)
  std::vector<TokenId> row_next_;      // MTP: per row, the next row's token in its seq (its own when last)
  struct ChainSeq {
    int32_t seq = 0;        // in the step's plan
    int32_t output = 0;     // the seq's last output row
    int32_t length = 0;     // StepSeq::mtp_chain
    int32_t first_pos = 0;  // the chain's first position (past the seq's rows)
  };
  int32_t chain_max_ = 0;              // ForwardOptions::mtp_chain
  int32_t chain_seqs_ = 0;             // ForwardOptions::mtp_chain_seqs, clamped
  int32_t first_scratch_ = 0;          // the first of 2 * chain_seqs_ scratch blocks
  std::vector<ChainSeq> chain_;        // this step's chaining seqs, longest first
  StepPlan chain_plan_;                // one row per chaining seq
  std::vector<float> chain_h_;         // per chaining seq: its last hidden state (shared_head_norm'ed)
  std::vector<TokenId> chain_tok_;     // per chaining seq: its last guess
  // gemma4 only: a layer's compact Q (then its compact attention output),
  // K and V rows; the per-layer inputs (rows × n_layer × pl), one token's
  // per-layer embedding per thread, the gate rows (rows × pl); ones for V's
  // weightless norm.
  std::vector<float> qc_, kc_, vc_, per_layer_inputs_, per_layer_row_, pe_, ones_;
  GatedDeltaLayer gdn_;                // hybrid models only
  Mamba2Layer mamba_;                  // Mamba2 hybrids only
  ActivationBuffers act_;  // prepared activations, one slot per distinct weight type
  LoraStep lora_;          // this step's adapters (ForwardOptions::max_lora_rank > 0)
  MoeFfn moe_;             // MoE models only
  ExpertLoad expert_load_;  // MoE models only
  std::vector<cpu::AttnSeq> attn_seqs_;
  cpu::AttentionScratch attn_scratch_;
};

}  // namespace met
