// The scores pass over Q8_0 keys (q8_keys.h) that every vector tier shares:
// the job's queries quantized once, the keys prefetched kQ8KeyPrefetchBlocks
// blocks ahead and each block's values with them, and per block of 16
// tokens each query that reads it handed to the tier's block kernel, which
// scores the 16 tokens and stores the first n (the rest of the block may be
// past the query's limit). Header-only and always inlined, so each tier's
// file builds its own copy with its own ISA flags (no copy built for one
// ISA serves another). Contract in attention_chunk.h.
// Threading: pure function of the job's memory. Tested by
// tests/backend/attention_test.cc and attention_window_test.cc through
// attention_q8_keys_avx2.cc and attention_q8_keys_avx512.cc.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "backend/cpu/kernels/attention_chunk.h"
#include "backend/cpu/q8_keys.h"

namespace met::cpu::attn {

inline constexpr int32_t kQ8KeyPrefetchBlocks = 2;  // how far ahead the keys are prefetched

// The 4 query codes starting at `codes`, as one 32-bit lane.
[[gnu::always_inline]] inline int32_t q8_code_quad(const int8_t* codes) {
  int32_t v;
  std::memcpy(&v, codes, sizeof(v));
  return v;
}

// Blocks g0 on: block_scores(head, q, scores, n) scores the 16 tokens of
// `head` (a kv head's keys of one block) for query q, times job.scale, into
// scores[0, n).
template <typename BlockScores>
[[gnu::always_inline]] inline void q8_keys_scores_pass(const ChunkJob& job, int32_t g0, BlockScores&& block_scores) {
  const int64_t query_bytes = q8_query_bytes(job.head_dim);
  for (int32_t i = 0; i < job.num_queries; ++i) {
    quantize_query_q8(job.q[i], job.head_dim, job.query_codes + i * query_bytes);
  }
  const int64_t head_bytes = kBlockTokens * job.row_bytes;
  const auto prefetch = [&](const uint8_t* head) {
    if (head == nullptr) return;
    for (int64_t b = 0; b < head_bytes; b += 64) __builtin_prefetch(head + b, 0, 3);
  };
  const int32_t groups = (job.num_tokens + kBlockTokens - 1) / kBlockTokens;
  for (int32_t g = g0; g < std::min(groups, g0 + kQ8KeyPrefetchBlocks); ++g) prefetch(ahead_rows(job, g, job.k_offset));
  for (int32_t g = g0; g < groups; ++g) {
    prefetch(ahead_rows(job, g + kQ8KeyPrefetchBlocks, job.k_offset));
    prefetch(ahead_rows(job, g, job.v_offset));
    const uint8_t* head = ahead_rows(job, g, job.k_offset);
    for (int32_t i = 0; i < job.num_queries; ++i) {
      const int32_t n = job.limit[i] - kBlockTokens * g;
      if (n <= 0 || query_start(job, i) >= kBlockTokens * (g + 1)) continue;
      block_scores(head, q8_query_at(job.query_codes + i * query_bytes, job.head_dim),
                   job.scores + i * kChunkTokens + kBlockTokens * g, std::min(n, kBlockTokens));
    }
  }
}

}  // namespace met::cpu::attn
