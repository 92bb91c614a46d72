// Portable chunk kernels (attn::scalar, the kScalar tier): plain float loops
// with std::exp, the same three passes as the vector tiers (scores, softmax
// of the chunk, weighted sum of V), each query over its own [start, limit)
// tokens. Also a readable statement of what the vector kernels compute
// (for Q8_0 keys, an integer dot per block: q8_keys.h; for Q8_0 values,
// 16-bit weights per block: q8_values.h; for F16 keys, four fma chains over
// the dims: f16_keys.h).
// Contract in attention_chunk.h.
// Threading: pure functions. Tested by tests/backend/attention_test.cc and
// attention_window_test.cc (per-query starts).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "backend/cpu/f16_keys.h"
#include "backend/cpu/kernels/attention_chunk.h"
#include "backend/cpu/kernels/attention_q8_values.h"
#include "backend/cpu/q8_keys.h"
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
struct LoadQ8_0 {};  // a tag: Q8_0 keys and values have passes of their own

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

// Q8_0 values (q8_values.h): per block of 16 tokens and 32 dims, each
// query's weights w = p * d as 16-bit codes on the block's largest |w|, the
// exact integer sums of codes times the values' codes, and one fma per dim,
// as every tier computes them.
void block_q8_values(const uint8_t* head, int32_t head_dim, const float* p, int32_t lo, int32_t hi, float* acc) {
  const uint8_t* scales = head + q8_value_scales_offset(head_dim);
  for (int32_t b = 0; b < head_dim / kQk; ++b) {
    float w[kBlockTokens];
    float m = 0.0f;
    for (int32_t t = 0; t < kBlockTokens; ++t) {
      w[t] = t >= lo && t < hi ? p[t] * fp16_to_f32(u16_at(scales + 2 * (b * kBlockTokens + t))) : 0.0f;
      m = std::max(m, std::fabs(w[t]));
    }
    if (!(m > 0.0f)) continue;
    const float inv = kQ8ValueWeightMax / m;
    int16_t codes[kBlockTokens];
    for (int32_t t = 0; t < kBlockTokens; ++t) codes[t] = q8_value_weight_code(w[t] * inv);
    const uint8_t* line = head + int64_t{b} * kQ8ValueBlockBytes;
    for (int32_t i = 0; i < kQk; ++i) {
      int32_t dot = 0;
      for (int32_t t = 0; t < kBlockTokens; ++t) {
        dot += int32_t{codes[t]} * static_cast<int8_t>(line[(t / 2) * kQ8ValueLineBytes + 2 * i + t % 2]);
      }
      acc[b * kQk + i] = std::fma(m / kQ8ValueWeightMax, static_cast<float>(dot), acc[b * kQk + i]);
    }
  }
}

// Q8_0 keys (q8_keys.h): each query quantized, then per token and block the
// exact integer dot of the codes, scaled and summed in block order with one
// fma each, as every tier sums them.
void scores_q8_keys(const ChunkJob& job) {
  const int32_t blocks = job.head_dim / kQk;
  const int64_t scales = q8_key_scales_offset(job.head_dim);
  for (int32_t i = 0; i < job.num_queries; ++i) {
    const QueryQ8 q = quantize_query_q8(job.q[i], job.head_dim, job.query_codes);
    for (int32_t t = std::max(first_block(job) * kBlockTokens, query_start(job, i)); t < job.limit[i]; ++t) {
      const uint8_t* head = job.kv_base + job.blocks[t / kBlockTokens].value() * job.block_stride + job.k_offset;
      const int32_t slot = t % kBlockTokens;
      float acc = 0.0f;
      for (int32_t b = 0; b < blocks; ++b) {
        int32_t dot = 0;
        for (int32_t d = b * kQk; d < (b + 1) * kQk; ++d) {
          dot += head[int64_t{d / 4} * kQ8KeyQuadBytes + 4 * slot + d % 4] * int32_t{q.codes[d]};
        }
        const float kd = fp16_to_f32(u16_at(head + scales + 2 * (int64_t{b} * kBlockTokens + slot)));
        acc = std::fma(static_cast<float>(dot - q.bias[b]), kd * q.d[b], acc);
      }
      job.scores[i * kChunkTokens + t] = acc * job.scale;
    }
  }
}

// F16 keys (f16_keys.h): per token, four fma chains over the dims (d mod
// 4), summed (a0 + a1) + (a2 + a3), then scaled, as every tier sums them.
void scores_f16_keys(const ChunkJob& job) {
  for (int32_t i = 0; i < job.num_queries; ++i) {
    const float* q = job.q[i];
    for (int32_t t = std::max(first_block(job) * kBlockTokens, query_start(job, i)); t < job.limit[i]; ++t) {
      const uint8_t* head = job.kv_base + job.blocks[t / kBlockTokens].value() * job.block_stride + job.k_offset;
      const uint8_t* slot = head + 2 * (t % kBlockTokens);
      float a[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      for (int32_t d = 0; d < job.head_dim; ++d) {
        a[d % 4] = std::fma(q[d], fp16_to_f32(u16_at(slot + int64_t{d} * kF16KeyDimBytes)), a[d % 4]);
      }
      job.scores[i * kChunkTokens + t] = ((a[0] + a[1]) + (a[2] + a[3])) * job.scale;
    }
  }
}

template <typename Load>
void chunk(const ChunkJob& job) {
  if constexpr (std::is_same_v<Load, LoadQ8_0>) {
    scores_q8_keys(job);
  } else if constexpr (std::is_same_v<Load, LoadF16>) {
    scores_f16_keys(job);
  } else {
    scores_pass<Load>(job);
  }
  soft_cap_scores(job);
  softmax_pass(job);
  if constexpr (std::is_same_v<Load, LoadQ8_0>) {
    q8_values_pass<1>(job, first_block(job), [&](const uint8_t* head, const Q8ValueReader* r, int32_t /*n*/) {
      block_q8_values(head, job.head_dim, r->p, r->lo, r->hi, r->acc);
    });
  } else {
    values_pass<Load>(job);
  }
}

}  // namespace

void chunk_f32(const ChunkJob& job) { chunk<LoadF32>(job); }
void chunk_f16(const ChunkJob& job) { chunk<LoadF16>(job); }
void chunk_bf16(const ChunkJob& job) { chunk<LoadBF16>(job); }
void chunk_q8_0(const ChunkJob& job) { chunk<LoadQ8_0>(job); }

}  // namespace met::cpu::attn::scalar
