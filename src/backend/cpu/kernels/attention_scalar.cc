// Portable chunk kernels (attn::scalar, the kScalar tier): plain float loops
// with std::exp, the same three passes as the vector tiers (scores, softmax
// of the chunk, weighted sum of V), each query over its own [start, limit)
// tokens. Also a readable statement of what the vector kernels compute.
// Contract in attention_chunk.h.
// Threading: pure functions. Tested by tests/backend/attention_test.cc and
// attention_window_test.cc (per-query starts).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/cpu/kernels/attention_chunk.h"
#include "tensor/block_types.h"
#include "tensor/half.h"

namespace met::cpu::attn::scalar {
namespace {

uint16_t u16_at(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

struct LoadF32 {
  static float at(const uint8_t* row, int32_t i) {
    float v;
    std::memcpy(&v, row + 4 * i, sizeof(v));
    return v;
  }
};
struct LoadF16 {
  static float at(const uint8_t* row, int32_t i) { return fp16_to_f32(u16_at(row + 2 * i)); }
};
struct LoadBF16 {
  static float at(const uint8_t* row, int32_t i) { return bf16_to_f32(u16_at(row + 2 * i)); }
};
struct LoadQ8_0 {
  static float at(const uint8_t* row, int32_t i) {
    const uint8_t* block = row + (i / kQk) * sizeof(BlockQ8_0);
    const auto q = static_cast<int8_t>(block[2 + i % kQk]);
    return fp16_to_f32(u16_at(block)) * static_cast<float>(q);
  }
};

template <typename Load>
void scores_pass(const ChunkJob& job) {
  for (int32_t t = first_block(job) * kBlockTokens; t < job.num_tokens; ++t) {
    const uint8_t* k = kv_row(job, job.k_offset, t);
    for (int32_t i = 0; i < job.num_queries; ++i) {
      if (t < query_start(job, i) || t >= job.limit[i]) continue;
      float dot = 0.0f;
      for (int32_t d = 0; d < job.head_dim; ++d) dot += job.q[i][d] * Load::at(k, d);
      job.scores[i * kChunkTokens + t] = dot * job.scale;
    }
  }
}

void softmax_pass(const ChunkJob& job) {
  for (int32_t i = 0; i < job.num_queries; ++i) {
    float* s = job.scores + i * kChunkTokens;
    const int32_t start = query_start(job, i);
    float m = s[start];
    for (int32_t t = start + 1; t < job.limit[i]; ++t) m = std::max(m, s[t]);
    float l = 0.0f;
    for (int32_t t = start; t < job.limit[i]; ++t) {
      s[t] = std::exp(s[t] - m);
      l += s[t];
    }
    float* rec = job.records[i];
    rec[0] = m;
    rec[1] = l;
    std::memset(rec + kRecordHeader, 0, sizeof(float) * static_cast<size_t>(job.head_dim));
  }
}

template <typename Load>
void values_pass(const ChunkJob& job) {
  for (int32_t t = first_block(job) * kBlockTokens; t < job.num_tokens; ++t) {
    const uint8_t* v = kv_row(job, job.v_offset, t);
    for (int32_t i = 0; i < job.num_queries; ++i) {
      if (t < query_start(job, i) || t >= job.limit[i]) continue;
      const float p = job.scores[i * kChunkTokens + t];
      float* acc = job.records[i] + kRecordHeader;
      for (int32_t d = 0; d < job.head_dim; ++d) acc[d] += p * Load::at(v, d);
    }
  }
}

template <typename Load>
void chunk(const ChunkJob& job) {
  scores_pass<Load>(job);
  soft_cap_scores(job);
  softmax_pass(job);
  values_pass<Load>(job);
}

}  // namespace

void chunk_f32(const ChunkJob& job) { chunk<LoadF32>(job); }
void chunk_f16(const ChunkJob& job) { chunk<LoadF16>(job); }
void chunk_bf16(const ChunkJob& job) { chunk<LoadBF16>(job); }
void chunk_q8_0(const ChunkJob& job) { chunk<LoadQ8_0>(job); }

}  // namespace met::cpu::attn::scalar
