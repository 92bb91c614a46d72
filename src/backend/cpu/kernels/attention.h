// Paged attention over the KV cache for a varlen batch that mixes prefill
// chunks and single-token decode rows, with grouped-query attention (query
// head h reads kv head h / (num_heads / num_kv_heads)).
// For a sequence with num_cached tokens in the cache whose rows r = 0 ..
// num_rows-1 have their K/V already stored (positions num_cached + r), row r
// attends causally to positions [0, num_cached + r] (a sequence that is not
// causal, AttnSeq::causal false: every row to all of its positions):
//   out[row][h] = softmax(q[row][h] . K^T * scale) . V
// computed with an online softmax over fixed chunks of kAttnChunkTokens
// positions read through the block table (no T x T score matrix).
// Per layer (AttnLayerOptions, gpt-oss): a sliding window limits a row at
// position p to [p - window + 1, p] (llama.cpp's LLAMA_SWA_TYPE_STANDARD),
// and a sink logit per head joins the softmax's max and denominator with
// no value (ggml's soft_max_ext with sinks):
//   out = sum_j e^(s_j - m) v_j / (sum_j e^(s_j - m) + e^(sink - m)),
//   m = max(max_j s_j, sink), the sink not multiplied by scale.
// A windowed row reads only the chunks its window meets (O(window) work),
// and no block wholly before the window of every row of its tile is read,
// nor its block table entry (the KV manager may release it).
//
// Work: a plan cuts a step's sequences into work items (sequence, kv head,
// a tile of query rows, a chunk range); every layer of the step reuses it
// (paged_attention replans only when the batch's shape changes). All threads
// of a WorkerPool job run the items of one layer. A long context is split
// along its chunks (split-K): each chunk's partial max/sum/acc goes to a
// slot, and after a barrier the partials of a row are folded in chunk
// order, so every core helps one long decode.
//
// Invariance (tested): a row's output is bit-identical whatever else is in
// the batch, whatever the thread count, and whether or not its chunks were
// split: its arithmetic is fixed by its own sequence (chunk c covers its
// positions [128c, 128c + 128); each chunk is computed for a tile of rows
// of that sequence alone and folded left to right by one function, from
// the first chunk its window meets; the sink joins once, in the final
// normalization); only which thread computes which chunk varies. Different
// ISA tiers give different (equally valid) bits. Default options give the
// very bits of a kernel without them.
// Threading: paged_attention from every thread of one job (thread 0 plans,
// then a barrier; it ends with a barrier); plan() from one thread while no
// paged_attention runs on the scratch. Tested by
// tests/backend/attention_test.cc and attention_window_test.cc (windows,
// sinks).
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "backend/cpu/kv_cache.h"
#include "backend/cpu/worker_pool.h"
#include "core/cpu_features.h"
#include "core/ids.h"
#include "core/status.h"
#include "gguf/ggml_type.h"

namespace met::cpu {

struct AttentionState;  // kernels/attention_state.h

inline constexpr int32_t kAttnChunkTokens = 128;  // positions per split-K chunk

// One sequence of the batch: rows [row_begin, row_begin + num_rows) of q and
// out, at positions num_cached, num_cached + 1, …
struct AttnSeq {
  std::span<const BlockId> block_table;  // covers [0, num_cached + num_rows)
  int32_t num_cached = 0;
  int32_t row_begin = 0;
  int32_t num_rows = 0;
  // False (an encoder's sequence): every row reads all of [0, num_cached +
  // num_rows), its later rows too. REQUIRES: no window then.
  bool causal = true;
};

// The end (exclusive) of the positions row `row` of `seq` reads.
inline int32_t row_read_end(const AttnSeq& seq, int32_t row) {
  return seq.num_cached + (seq.causal ? row + 1 : seq.num_rows);
}

// Per-layer options of paged_attention. The plan of a step does not depend
// on them: layers with and without a window share it.
struct AttnLayerOptions {
  int32_t window = 0;  // > 0: a row at position p reads positions [p - window + 1, p]; 0: [0, p]
  const float* sinks = nullptr;  // num_heads logits joining each head's softmax (unscaled), or null
  // > 0 (gemma2): each scaled score s becomes softcap * tanh(s / softcap)
  // before the softmax, as ggml's attention with attn_soft_cap.
  float softcap = 0.0f;
};

class AttentionScratch;

// Attention of `seqs` for `layer`. q: row i's heads at q + i * q_stride
// (head h at h * head_dim); out likewise. Called by every thread of the job
// (ctx.nth() <= limits.num_threads) with the same arguments; returns after a
// barrier, with every row of every seq written.
// REQUIRES: the seqs pass AttentionScratch::plan's checks (StepPlan's
// validate_plan implies them); num_heads and the cache's kv heads and
// head_dim match the limits; every block id the rows' windows meet is in
// the cache; opts.window >= 0.
void paged_attention(ThreadCtx& ctx, const KvCache& cache, int32_t layer,
                     std::span<const AttnSeq> seqs, const float* q, int64_t q_stride,
                     int32_t num_heads, float scale, float* out, int64_t out_stride,
                     AttentionScratch& scratch, const AttnLayerOptions& opts = {});

enum class SplitK : uint8_t {
  kAuto,    // split the largest work units while threads would idle
  kAlways,  // split every unit of more than one chunk (tests, benchmarks)
  kNever,
};

struct AttentionLimits {
  int32_t num_heads = 0;
  int32_t num_kv_heads = 0;  // divides num_heads
  int32_t head_dim = 0;
  int32_t max_rows = 0;     // rows of one step
  int32_t num_threads = 1;  // of the pool that runs paged_attention
  // Partial slots for split-K (each one query's chunk partial); 0 picks
  // num_threads * max(num_heads, 16) * 32. Units that do not fit run unsplit.
  int64_t max_split_slots = 0;
  SplitK split = SplitK::kAuto;
};

// Everything a step's attention needs besides its inputs, allocated once
// for the largest batch: the plan, per-thread buffers and split-K slots.
class AttentionScratch {
 public:
  AttentionScratch();  // empty: assign a real one before use
  // REQUIRES: limits are positive and num_heads % num_kv_heads == 0; `isa`
  // is supported by this CPU.
  explicit AttentionScratch(const AttentionLimits& limits, Isa isa = selected_isa());
  ~AttentionScratch();
  AttentionScratch(AttentionScratch&&) noexcept;
  AttentionScratch& operator=(AttentionScratch&&) noexcept;

  // Plans a step (paged_attention does it when needed; tests and benchmarks
  // call it to look at the plan). The seqs' block tables must outlive the
  // step's calls. kOutOfRange past max_rows; kInvalidArgument for a seq
  // without rows, overlapping or out-of-order rows, or a block table too
  // short.
  Status plan(std::span<const AttnSeq> seqs);

  const AttentionLimits& limits() const;
  Isa isa() const;
  int32_t num_items() const;        // work items of the current plan
  int32_t num_split_units() const;  // units whose chunks were spread out

 private:
  friend void paged_attention(ThreadCtx& ctx, const KvCache& cache, int32_t layer,
                              std::span<const AttnSeq> seqs, const float* q, int64_t q_stride,
                              int32_t num_heads, float scale, float* out, int64_t out_stride,
                              AttentionScratch& scratch, const AttnLayerOptions& opts);
  // Thread 0's part of paged_attention: keeps the plan if only the block
  // tables changed (refreshing them), else plans anew.
  void plan_for(std::span<const AttnSeq> seqs);

  std::unique_ptr<AttentionState> s_;
};

}  // namespace met::cpu
