// The chunk kernel: the inner loop of paged attention, one per ISA tier and
// KV dtype. It computes, for a few queries that share one kv head, the
// softmax partial of one KV chunk (at most kAttnChunkTokens positions read
// through the block table): m = max score, l = sum exp(score - m), acc =
// sum exp(score - m) * v, with score = q . k * scale. attention.cc folds the
// partials of a row's chunks in order, so a row's result depends only on its
// own chunks, never on how work was spread over threads.
// Declarations only (no intrinsics): a tier's functions may be called only
// when selected_isa() is at least that tier.
//   attn::scalar - attention_scalar.cc (baseline flags, portable C++)
//   attn::avx2   - attention_avx2.cc (-march=x86-64-v3)
//   attn::avx512 - attention_avx512.cc (-march=x86-64-v4 + VNNI + BF16)
// Invariants (REQUIRES of every kernel): 0 <= start[i] < limit[i] <=
// num_tokens <= kAttnChunkTokens; records are 64-byte aligned with room for
// kRecordHeader + round_up(head_dim, 16) floats; head_dim is a multiple of 8
// (32 for Q8_0). F16 and Q8_0 keys are read in their own layouts, tokens in
// lanes (f16_keys.h; q8_keys.h, the query quantized to Q8_0 first), and
// Q8_0 values in theirs, token pairs in lanes (q8_values.h, each query's
// weights as 16-bit codes per block). A
// tier's result is a pure function of its inputs and of no other query in
// the job (each query's arithmetic is done alone; tokens
// outside a query's [start, limit) add exact zeros). Kernels read the blocks
// from first_block(job) on, never an earlier one nor its table entry (a
// window's release may have left it invalid); they may read every slot of
// those blocks, also outside [start, limit) (such values, finite, never
// reach a result), and use scores as scratch.
// Threading: pure functions over the job's memory. Tested through
// tests/backend/attention_test.cc and attention_window_test.cc.
#pragma once

#include <algorithm>
#include <cstdint>

#include <cmath>

#include "backend/cpu/block_tokens.h"
#include "backend/step_plan.h"
#include "core/cpu_features.h"
#include "core/ids.h"
#include "gguf/ggml_type.h"

namespace met::cpu::attn {

inline constexpr int32_t kChunkTokens = 128;  // = kAttnChunkTokens (attention.h)
inline constexpr int32_t kRecordHeader = 16;  // floats before acc: m at [0], l at [1]
static_assert(kChunkTokens % kBlockTokens == 0);

struct ChunkJob {
  const uint8_t* kv_base = nullptr;  // KvCache::data()
  int64_t block_stride = 0;         // from a block's rows to the next block's (KvCache::block_stride)
  const BlockId* blocks = nullptr;  // the chunk's blocks: token t is in blocks[t / 16]
  int64_t k_offset = 0;             // of this layer and kv head (KvCache::k_offset)
  int64_t v_offset = 0;
  int64_t row_bytes = 0;  // one slot of one head
  int32_t head_dim = 0;
  int32_t num_tokens = 0;  // max of limit[]
  int32_t num_queries = 0;
  const float* const* q = nullptr;  // num_queries rows of head_dim floats
  const int32_t* limit = nullptr;   // query i sees tokens [start[i], limit[i]) of the chunk
  const int32_t* start = nullptr;   // null: every start is 0
  float scale = 1.0f;
  float softcap = 0.0f;             // > 0: scores soft-capped (AttnLayerOptions::softcap)
  float* scores = nullptr;          // scratch: num_queries * kChunkTokens floats
  // Q8_0 keys (q8_keys.h): scratch for the quantized queries,
  // num_queries * q8_query_bytes(head_dim) bytes, 64-byte aligned.
  uint8_t* query_codes = nullptr;
  float* const* records = nullptr;  // out: query i's m, l, acc
  // A hint: the blocks of the chunk this thread runs next (its K and V are
  // prefetched during this one's values pass), or none.
  const BlockId* next_blocks = nullptr;
  int32_t num_next_blocks = 0;
};

// Query i's first token: tokens before it are masked out of its softmax.
inline int32_t query_start(const ChunkJob& job, int32_t i) {
  return job.start == nullptr ? 0 : job.start[i];
}

// Soft-caps the scores each query reads, softcap * tanh(s / softcap), between
// a kernel's score and softmax passes (every tier the same scalar code: a
// gemma2-only path, a tanh per score).
inline void soft_cap_scores(const ChunkJob& job) {
  if (job.softcap <= 0.0f) return;
  for (int32_t i = 0; i < job.num_queries; ++i) {
    float* s = job.scores + static_cast<ptrdiff_t>(i) * kChunkTokens;
    for (int32_t t = query_start(job, i); t < job.limit[i]; ++t) {
      s[t] = job.softcap * std::tanh(s[t] / job.softcap);
    }
  }
}

// The first block of the chunk any query reads: the kernels begin there.
inline int32_t first_block(const ChunkJob& job) {
  if (job.start == nullptr) return 0;
  int32_t lo = job.start[0];
  for (int32_t i = 1; i < job.num_queries; ++i) lo = std::min(lo, job.start[i]);
  return lo / kBlockTokens;
}

// Where block g of the job's chunk (g >= its block count: of the next
// chunk) keeps its rows at `offset`, or null past both.
inline const uint8_t* ahead_rows(const ChunkJob& job, int32_t g, int64_t offset) {
  const int32_t blocks = (job.num_tokens + kBlockTokens - 1) / kBlockTokens;
  if (g < blocks) return job.kv_base + job.blocks[g].value() * job.block_stride + offset;
  if (g - blocks < job.num_next_blocks) {
    return job.kv_base + job.next_blocks[g - blocks].value() * job.block_stride + offset;
  }
  return nullptr;
}

// Where block g of the next chunk (job.next_blocks) keeps its rows at
// `offset`, or null past its blocks. A kernel's values pass prefetches, per
// token it weighs, the next chunk's K and V rows of that token (into L2), so
// memory keeps streaming while the pass computes from cache: without it a
// chunk's reads and arithmetic take turns instead of overlapping. The block
// is found once per block, not per token: the per-token lookup made the hot
// decode kernel 7-11% slower (met_attention_bench
// DecodeAttentionHotInline/context:1024, F16 and Q8_0).
inline const uint8_t* next_chunk_block(const ChunkJob& job, int32_t g) {
  if (g >= job.num_next_blocks) return nullptr;
  return job.kv_base + job.next_blocks[g].value() * job.block_stride + job.k_offset;
}

// The K row at `k` (a row of next_chunk_block) and its V row, into L2
// (prefetcht1; a compiler builtin, so every tier shares it; always inlined,
// so no copy built for one ISA serves another).
[[gnu::always_inline]] inline void prefetch_next_row(const ChunkJob& job, const uint8_t* k) {
  const int64_t to_v = job.v_offset - job.k_offset;
  for (int64_t b = 0; b < job.row_bytes; b += 64) {
    __builtin_prefetch(k + b, 0, 2);
    __builtin_prefetch(k + to_v + b, 0, 2);
  }
}

inline const uint8_t* kv_row(const ChunkJob& job, int64_t offset, int32_t t) {
  return job.kv_base + job.blocks[t / kBlockTokens].value() * job.block_stride + offset +
         (t % kBlockTokens) * job.row_bytes;
}

using ChunkKernel = void (*)(const ChunkJob& job);

// The kernel `isa` runs for `dtype` (kAmx uses AVX-512's). Null for a dtype
// the KV cache does not store.
ChunkKernel chunk_kernel(Isa isa, GgmlType dtype);

namespace scalar {
void chunk_f32(const ChunkJob& job);
void chunk_f16(const ChunkJob& job);
void chunk_bf16(const ChunkJob& job);
void chunk_q8_0(const ChunkJob& job);
}  // namespace scalar

// The scores passes of chunk_q8_0 over Q8_0 keys (q8_keys.h) and of
// chunk_f16 over F16 keys (f16_keys.h), blocks g0 on:
// attention_q8_keys_TIER.cc and attention_f16_keys_TIER.cc; the values pass
// of chunk_q8_0 over Q8_0 values (q8_values.h): attention_q8_values_TIER.cc.
namespace avx2 {
void chunk_f32(const ChunkJob& job);
void chunk_f16(const ChunkJob& job);
void chunk_bf16(const ChunkJob& job);
void chunk_q8_0(const ChunkJob& job);
void scores_q8_keys(const ChunkJob& job, int32_t g0);
void scores_f16_keys(const ChunkJob& job, int32_t g0);
void values_q8(const ChunkJob& job, int32_t g0);
}  // namespace avx2

namespace avx512 {
void chunk_f32(const ChunkJob& job);
void chunk_f16(const ChunkJob& job);
void chunk_bf16(const ChunkJob& job);
void chunk_q8_0(const ChunkJob& job);
void scores_q8_keys(const ChunkJob& job, int32_t g0);
void scores_f16_keys(const ChunkJob& job, int32_t g0);
void values_q8(const ChunkJob& job, int32_t g0);
}  // namespace avx512

}  // namespace met::cpu::attn
