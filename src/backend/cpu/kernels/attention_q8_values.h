// The values pass over Q8_0 values (q8_values.h) that every tier shares:
// each query's accumulator zeroed, then per block of 16 tokens the next
// chunk's K and V of that block prefetched (into L2) and the queries that
// read the block handed, a tile at a time, to the tier's block kernel, which
// adds the block's weighted values to each query's accumulator (16-bit
// weights on the block's scale, q8_values.h). A query's weights depend on its
// own softmax only and its sums are exact integers, so its bits are the same
// alone or beside others, in any tile. Header-only and always inlined, so
// each tier's file builds its own copy with its own ISA flags (no copy built
// for one ISA serves another). Contract in attention_chunk.h.
// Threading: pure function of the job's memory. Tested by
// tests/backend/attention_test.cc and attention_window_test.cc through
// attention_scalar.cc, attention_q8_values_avx2.cc and
// attention_q8_values_avx512.cc.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "backend/cpu/kernels/attention_chunk.h"
#include "backend/cpu/q8_values.h"

namespace met::cpu::attn {

inline constexpr int32_t kMaxQ8ValueBlocks = 1024 / 32;  // kv_cache.h's kMaxKvHeadDim in 32-dim blocks

// The 16-bit weight codes of slots 2k and 2k + 1, as one 32-bit lane.
[[gnu::always_inline]] inline int32_t q8_weight_pair(const int16_t* codes, int32_t k) {
  int32_t v;
  std::memcpy(&v, codes + 2 * k, sizeof(v));
  return v;
}

// A query reading a block: its softmax weights of the block's 16 tokens,
// the tokens [lo, hi) it reads, its accumulator (head_dim floats).
struct Q8ValueReader {
  const float* p;
  int32_t lo, hi;
  float* acc;
};

// Blocks g0 on: block_values(head, readers, n) adds to each reader's acc
// the values of its tokens of `head` (a kv head's values of one block)
// weighted by its p, for n (1 .. kTile) readers, so a tier sums each cached
// code once for a tile of queries (a GQA group).
template <int32_t kTile, typename BlockValues>
[[gnu::always_inline]] inline void q8_values_pass(const ChunkJob& job, int32_t g0, BlockValues&& block_values) {
  for (int32_t i = 0; i < job.num_queries; ++i) {
    std::memset(job.records[i] + kRecordHeader, 0, sizeof(float) * static_cast<size_t>(job.head_dim));
  }
  const int64_t head_bytes = kBlockTokens * job.row_bytes;
  const int32_t groups = (job.num_tokens + kBlockTokens - 1) / kBlockTokens;
  for (int32_t g = g0; g < groups; ++g) {
    if (const uint8_t* next = next_chunk_block(job, g); next != nullptr) {
      const int64_t to_v = job.v_offset - job.k_offset;
      for (int64_t b = 0; b < head_bytes; b += 64) {
        __builtin_prefetch(next + b, 0, 2);
        __builtin_prefetch(next + to_v + b, 0, 2);
      }
    }
    const uint8_t* head = ahead_rows(job, g, job.v_offset);
    Q8ValueReader tile[kTile];
    int32_t n = 0;
    for (int32_t i = 0; i < job.num_queries; ++i) {
      const int32_t lo = query_start(job, i) - kBlockTokens * g, hi = job.limit[i] - kBlockTokens * g;
      if (hi <= 0 || lo >= kBlockTokens) continue;
      tile[n++] = {job.scores + i * kChunkTokens + kBlockTokens * g, std::max(lo, 0), std::min(hi, kBlockTokens),
                   job.records[i] + kRecordHeader};
      if (n == kTile) {
        block_values(head, tile, n);
        n = 0;
      }
    }
    if (n > 0) block_values(head, tile, n);
  }
}

}  // namespace met::cpu::attn
