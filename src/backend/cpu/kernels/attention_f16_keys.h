// The scores pass over F16 keys (f16_keys.h) that every vector tier shares:
// the keys prefetched kF16KeyPrefetchBlocks blocks ahead and each block's
// values with them, and per block of 16 tokens each query that reads it
// handed to the tier's block kernel, which scores the 16 tokens and stores
// the first n (the rest of the block may be past the query's limit); or,
// where the tier has one, two blocks the same queries read handed to its
// pair kernel, up to kF16KeyQueries queries a call.
// Header-only and always inlined, so each tier's file builds its own copy
// with its own ISA flags (no copy built for one ISA serves another).
// Contract in attention_chunk.h.
// Threading: pure function of the job's memory. Tested by
// tests/backend/attention_test.cc and attention_window_test.cc through
// attention_f16_keys_avx2.cc and attention_f16_keys_avx512.cc.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "backend/cpu/f16_keys.h"
#include "backend/cpu/kernels/attention_chunk.h"

namespace met::cpu::attn {

inline constexpr int32_t kF16KeyPrefetchBlocks = 2;  // how far ahead the keys are prefetched

inline constexpr int32_t kF16KeyQueries = 4;  // queries scored at once, each dim converted once for all

// Blocks g0 on: block_scores(count, head, g, idx, ahead) scores the 16
// tokens of `head` (a kv head's keys of block g) for the K = count.value (a
// std::integral_constant, 1 to kF16KeyQueries: the tier's kernel is built
// per K) queries job.q[idx[0 .. K)], each times job.scale into its scores of block
// g, the first min(limit - 16 g, 16) of them (the rest may be past its
// limit). `ahead`: the block's first call is to prefetch, spread over its
// dims (a piece is 32 head_dim bytes: one 64-byte line of each per two
// dims), the keys kF16KeyPrefetchBlocks blocks on and this block's values
// (rows); later calls of the block get none. (Prefetching each whole piece
// at the block's start instead left attention at batch 16 and 1,024
// positions slower than the row layout's per-token spread.)
struct F16KeyAhead {
  const uint8_t* keys = nullptr;
  const uint8_t* values = nullptr;
};

template <typename BlockScores, typename Head, typename Ahead>
[[gnu::always_inline]] inline void score_queries(BlockScores& block_scores, int32_t k, const Head& head, int32_t g,
                                                 const int32_t* idx, const Ahead& ahead) {
  static_assert(kF16KeyQueries == 4);
  switch (k) {
    case 1: block_scores(std::integral_constant<int, 1>{}, head, g, idx, ahead); break;
    case 2: block_scores(std::integral_constant<int, 2>{}, head, g, idx, ahead); break;
    case 3: block_scores(std::integral_constant<int, 3>{}, head, g, idx, ahead); break;
    default: block_scores(std::integral_constant<int, 4>{}, head, g, idx, ahead); break;
  }
}

// Whether query i reads any token of block g.
[[gnu::always_inline]] inline bool reads_block(const ChunkJob& job, int32_t i, int32_t g) {
  return job.limit[i] > kBlockTokens * g && query_start(job, i) < kBlockTokens * (g + 1);
}

// Hands blocks g and g + 1 to pair_scores when the same queries read both,
// in groups of kF16KeyQueries (the last one smaller); false (nothing scored)
// otherwise. A prefill tile's queries all read the blocks before their
// diagonal, so each pair of those goes here, each dim of the two converted
// once per group. `ahead`: block g's (f16_keys_scores_pass), handed to the
// first group only.
template <typename PairScores>
[[gnu::always_inline]] inline bool score_pair(const ChunkJob& job, int32_t g, const F16KeyAhead& ahead,
                                              PairScores& pair_scores) {
  int32_t readers = 0;
  for (int32_t i = 0; i < job.num_queries; ++i) {
    const bool reads = reads_block(job, i, g);
    if (reads != reads_block(job, i, g + 1)) return false;
    readers += reads ? 1 : 0;
  }
  if (readers == 0) return false;
  const uint8_t* heads[2] = {ahead_rows(job, g, job.k_offset), ahead_rows(job, g + 1, job.k_offset)};
  F16KeyAhead aheads[2] = {
      ahead, {ahead_rows(job, g + 1 + kF16KeyPrefetchBlocks, job.k_offset), ahead_rows(job, g + 1, job.v_offset)}};
  int32_t idx[kF16KeyQueries];
  int32_t k = 0;
  for (int32_t i = 0; i < job.num_queries; ++i) {
    if (!reads_block(job, i, g)) continue;
    idx[k++] = i;
    if (k == kF16KeyQueries || k == readers) {
      score_queries(pair_scores, k, heads, g, idx, aheads);
      aheads[0] = aheads[1] = {};
      readers -= k;
      k = 0;
    }
  }
  return true;
}

// Blocks g0 on. `pair_scores` (a tier's kernel for two blocks at once, or
// nullptr: none) takes blocks g and g + 1 where the same queries read both
// (score_pair): pair_scores(count, heads, g, idx, aheads) with heads[2] and
// aheads[2] as block_scores'.
template <typename BlockScores, typename PairScores = std::nullptr_t>
[[gnu::always_inline]] inline void f16_keys_scores_pass(const ChunkJob& job, int32_t g0, BlockScores&& block_scores,
                                                        PairScores&& pair_scores = nullptr) {
  const int64_t head_bytes = kBlockTokens * job.row_bytes;
  const int32_t groups = (job.num_tokens + kBlockTokens - 1) / kBlockTokens;
  for (int32_t g = g0; g < std::min(groups, g0 + kF16KeyPrefetchBlocks); ++g) {
    const uint8_t* head = ahead_rows(job, g, job.k_offset);
    for (int64_t b = 0; b < head_bytes; b += 64) __builtin_prefetch(head + b, 0, 3);
  }
  for (int32_t g = g0; g < groups; ++g) {
    F16KeyAhead ahead{ahead_rows(job, g + kF16KeyPrefetchBlocks, job.k_offset), ahead_rows(job, g, job.v_offset)};
    const uint8_t* head = ahead_rows(job, g, job.k_offset);
    if constexpr (!std::is_null_pointer_v<std::remove_cvref_t<PairScores>>) {
      if (g + 1 < groups && score_pair(job, g, ahead, pair_scores)) {
        ++g;
        continue;
      }
    }
    int32_t idx[kF16KeyQueries];
    int32_t k = 0;
    for (int32_t i = 0; i < job.num_queries; ++i) {
      if (!reads_block(job, i, g)) continue;
      idx[k++] = i;
      if (k == kF16KeyQueries) {
        score_queries(block_scores, k, head, g, idx, ahead);
        ahead = {};
        k = 0;
      }
    }
    if (k > 0) score_queries(block_scores, k, head, g, idx, ahead);
  }
}

// Line `line` (< head_dim / 2) of each of `ahead`'s pieces.
[[gnu::always_inline]] inline void prefetch_ahead_line(const F16KeyAhead& ahead, int32_t line) {
  if (ahead.keys != nullptr) __builtin_prefetch(ahead.keys + 64 * line, 0, 3);
  if (ahead.values != nullptr) __builtin_prefetch(ahead.values + 64 * line, 0, 3);
}

}  // namespace met::cpu::attn
