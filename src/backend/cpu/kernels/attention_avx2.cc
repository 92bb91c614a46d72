// AVX2 chunk kernels (attn::avx2): 8 floats per vector (head_dim is a
// multiple of 8, so head rows need no tail), K and V converted on the fly
// (F16 with F16C, BF16 by a shift; Q8_0 keys are scored by integer dots in
// attention_q8_keys_avx2.cc and Q8_0 values summed by them in
// attention_q8_values_avx2.cc, F16 keys, tokens in lanes, in
// attention_f16_keys_avx2.cc). Score tails of the chunk softmax are blended
// with a lane mask.
// Contract in attention_chunk.h. Built with -march=x86-64-v3 only.
// Same shape as attention_avx512.cc: scores for 8 tokens at a time summed
// by one 8x8 transpose-add, register accumulators for V, software prefetch
// of the next block's K and this block's V (and, from the values pass, of
// the next chunk's K and V); tokens outside a query's
// [start, limit) get p = 0, and blocks before the first start are not read.
// Threading: pure functions. Tested by tests/backend/attention_test.cc and
// attention_window_test.cc (per-query starts).
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "backend/cpu/block_tokens.h"
#include "backend/cpu/kernels/attention_chunk.h"
#include "core/vector_exp.h"

namespace met::cpu::attn::avx2 {
namespace {

float hsum(__m256 v) {
  __m128 lo = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
  lo = _mm_add_ss(lo, _mm_movehdup_ps(lo));
  return _mm_cvtss_f32(lo);
}

// transpose_sum(r) lane t = sum of the lanes of r[kRowOf[t]].
constexpr int32_t kRowOf[8] = {0, 2, 1, 3, 4, 6, 5, 7};

[[gnu::always_inline]] inline __m256 transpose_sum(const __m256 (&r)[8]) {
  __m256 x[4], y[2];
  for (int i = 0; i < 4; ++i) {
    x[i] = _mm256_add_ps(_mm256_permute2f128_ps(r[i], r[i + 4], 0x20),
                         _mm256_permute2f128_ps(r[i], r[i + 4], 0x31));
  }
  for (int i = 0; i < 2; ++i) {
    y[i] = _mm256_add_ps(_mm256_shuffle_ps(x[i], x[i + 2], 0x44),
                         _mm256_shuffle_ps(x[i], x[i + 2], 0xEE));
  }
  return _mm256_add_ps(_mm256_shuffle_ps(y[0], y[1], 0x88), _mm256_shuffle_ps(y[0], y[1], 0xDD));
}

float hmax(__m256 v) {
  __m128 lo = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  lo = _mm_max_ps(lo, _mm_movehl_ps(lo, lo));
  lo = _mm_max_ss(lo, _mm_movehdup_ps(lo));
  return _mm_cvtss_f32(lo);
}

// Lanes t + 0..7 that are below n, as an all-ones mask.
__m256 lanes_below(int32_t t, int32_t n) {
  const __m256i idx =
      _mm256_add_epi32(_mm256_set1_epi32(t), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  return _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(n), idx));
}

// Lanes t + 0..7 that are in [lo, n), as an all-ones mask.
__m256 lanes_in(int32_t t, int32_t lo, int32_t n) {
  const __m256i idx =
      _mm256_add_epi32(_mm256_set1_epi32(t), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  const __m256i below_n = _mm256_cmpgt_epi32(_mm256_set1_epi32(n), idx);
  const __m256i below_lo = _mm256_cmpgt_epi32(_mm256_set1_epi32(lo), idx);
  return _mm256_castsi256_ps(_mm256_andnot_si256(below_lo, below_n));
}

// Elements [8v, 8v + 8) of a row.
struct LoadF32 {
  static __m256 at(const uint8_t* row, int32_t v) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(row) + 8 * v);
  }
};
struct LoadF16 {
  static __m256 at(const uint8_t* row, int32_t v) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 16 * v)));
  }
};
struct LoadBF16 {
  static __m256 at(const uint8_t* row, int32_t v) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 16 * v));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
};
struct LoadQ8_0 {};  // a tag: Q8_0 keys and values have passes of their own

constexpr int32_t kPrefetchBlocks = 2;  // how far ahead K is prefetched

// The 16 rows of block g of the chunk (tokens 16g .. 16g + 15) at `offset`.
const uint8_t* block_rows(const ChunkJob& job, int32_t g, int64_t offset) {
  return job.kv_base + job.blocks[g].value() * job.block_stride + offset;
}

[[gnu::always_inline]] inline void prefetch_row(const uint8_t* row, int64_t row_bytes) {
  for (int64_t b = 0; b < row_bytes; b += 64) _mm_prefetch(row + b, _MM_HINT_T0);
}

// Prefetches, spread over the tokens so they overlap the arithmetic, the
// rows of `ahead` (K of a later block) and `values` (V of this block); null:
// none.
struct Prefetch {
  const uint8_t* ahead = nullptr;
  const uint8_t* values = nullptr;
};

// Scores of the 8 rows from `k` for query q (slots past the query's limit
// are computed too: their lanes are never used). NV > 0: head_dim / 8 known
// at compile time (q stays in registers up to 4 vectors); NV == 0: any.
template <typename Load, int NV>
[[gnu::always_inline]] inline __m256 scores8(const float* q, const uint8_t* k, int64_t row_bytes,
                                             int32_t nv, Prefetch pf) {
  constexpr bool kQInRegisters = NV > 0 && NV <= 4;
  __m256 qv[kQInRegisters ? NV : 1];
  if constexpr (kQInRegisters) {
    for (int v = 0; v < NV; ++v) qv[v] = _mm256_loadu_ps(q + 8 * v);
  }
  const int32_t n = NV > 0 ? NV : nv;
  __m256 r[8];
#pragma GCC unroll 8
  for (int32_t t = 0; t < 8; ++t) {
    const uint8_t* row = k + t * row_bytes;
    if (pf.ahead != nullptr) prefetch_row(pf.ahead + t * row_bytes, row_bytes);
    if (pf.values != nullptr) prefetch_row(pf.values + t * row_bytes, row_bytes);
    __m256 acc = _mm256_setzero_ps();
#pragma GCC unroll 8
    for (int32_t v = 0; v < n; ++v) {
      const __m256 x = kQInRegisters ? qv[v] : _mm256_loadu_ps(q + 8 * v);
      acc = _mm256_fmadd_ps(x, Load::at(row, v), acc);
    }
    r[kRowOf[t]] = acc;
  }
  return transpose_sum(r);
}

template <typename Load, int NV, bool kStarts>
void scores_pass(const ChunkJob& job, int32_t nv, int32_t g0) {
  const int32_t groups = (job.num_tokens + 15) / 16;
  const __m256 scale = _mm256_set1_ps(job.scale);
  const int64_t rb = job.row_bytes;
  for (int32_t g = g0; g < groups; ++g) {
    const uint8_t* ahead = ahead_rows(job, g + kPrefetchBlocks, job.k_offset);
    const uint8_t* values = block_rows(job, g, job.v_offset);
    const uint8_t* k = block_rows(job, g, job.k_offset);
    if (g == g0) {
      for (int32_t b = g0; b < g0 + kPrefetchBlocks; ++b) {
        const uint8_t* rows = ahead_rows(job, b, job.k_offset);
        for (int32_t t = 0; rows != nullptr && t < kBlockTokens; ++t)
          prefetch_row(rows + t * rb, rb);
      }
    }
    for (int32_t i = 0; i < job.num_queries; ++i) {
      float* s = job.scores + i * kChunkTokens + 16 * g;
      const int32_t n = job.limit[i] - 16 * g;
      const int32_t skip = kStarts ? job.start[i] - 16 * g : 0;  // tokens before the start
      // The last query, which reads every token of the chunk, prefetches.
      const bool last = i == job.num_queries - 1;
      const Prefetch lo = last ? Prefetch{ahead, values} : Prefetch{};
      const Prefetch hi =
          last ? Prefetch{ahead ? ahead + 8 * rb : nullptr, values + 8 * rb} : Prefetch{};
      if (n > 0 && skip < 8)
        _mm256_storeu_ps(s, _mm256_mul_ps(scores8<Load, NV>(job.q[i], k, rb, nv, lo), scale));
      if (n > 8 && skip < 16)
        _mm256_storeu_ps(s + 8,
                         _mm256_mul_ps(scores8<Load, NV>(job.q[i], k + 8 * rb, rb, nv, hi), scale));
    }
  }
}

template <typename Load, bool kStarts>
void scores_any(const ChunkJob& job, int32_t nv, int32_t g0) {
  switch (nv) {
    case 1: scores_pass<Load, 1, kStarts>(job, nv, g0); break;
    case 2: scores_pass<Load, 2, kStarts>(job, nv, g0); break;
    case 3: scores_pass<Load, 3, kStarts>(job, nv, g0); break;
    case 4: scores_pass<Load, 4, kStarts>(job, nv, g0); break;
    case 5: scores_pass<Load, 5, kStarts>(job, nv, g0); break;
    case 6: scores_pass<Load, 6, kStarts>(job, nv, g0); break;
    case 7: scores_pass<Load, 7, kStarts>(job, nv, g0); break;
    case 8: scores_pass<Load, 8, kStarts>(job, nv, g0); break;
    default: scores_pass<Load, 0, kStarts>(job, nv, g0); break;
  }
}

// Scores of [start, limit) become exp(score - max); the rest of [16 g0,
// num_tokens) zero (lanes outside are blended or and-ed away, whatever
// they held). Works in whole vectors up to round_up(limit, 8) <=
// kChunkTokens. !kStarts: every start is 0 and g0 is 0.
template <bool kStarts>
void softmax_pass(const ChunkJob& job, int32_t g0) {
  for (int32_t i = 0; i < job.num_queries; ++i) {
    float* s = job.scores + i * kChunkTokens;
    const int32_t lo = kStarts ? job.start[i] : 0;
    const int32_t n = job.limit[i];
    const auto lanes = [&](int32_t t) { return kStarts ? lanes_in(t, lo, n) : lanes_below(t, n); };
    __m256 vmax = _mm256_set1_ps(-INFINITY);
    for (int32_t t = 16 * g0; t < n; t += 8)
      vmax = _mm256_max_ps(vmax, _mm256_blendv_ps(vmax, _mm256_loadu_ps(s + t), lanes(t)));
    const float mx = hmax(vmax);
    __m256 sum = _mm256_setzero_ps();
    int32_t t = 16 * g0;
    for (; t < n; t += 8) {
      const __m256 x = _mm256_sub_ps(_mm256_loadu_ps(s + t), _mm256_set1_ps(mx));
      const __m256 e = _mm256_and_ps(exp_avx2(x), lanes(t));
      _mm256_storeu_ps(s + t, e);
      sum = _mm256_add_ps(sum, e);
    }
    for (; t < job.num_tokens; t += 8) _mm256_storeu_ps(s + t, _mm256_setzero_ps());
    job.records[i][0] = mx;
    job.records[i][1] = hsum(sum);
  }
}

// acc of queries [i0, i0 + QT) over vectors [v0, v0 + NV) of the head row,
// in registers (every loop over q and v is unrolled). `prefetch_next`: token
// t's step also prefetches the next chunk's token t (next_chunk_block).
template <typename Load, int NV, int QT>
void values_tile(const ChunkJob& job, int32_t i0, int32_t v0, int32_t g0, bool prefetch_next) {
  __m256 acc[QT * NV];
#pragma GCC unroll 16
  for (int a = 0; a < QT * NV; ++a) acc[a] = _mm256_setzero_ps();
  const float* p = job.scores + i0 * kChunkTokens;
  for (int32_t g = g0; g * 16 < job.num_tokens; ++g) {
    const uint8_t* vb = block_rows(job, g, job.v_offset);
    const int32_t n = std::min(16, job.num_tokens - 16 * g);
    const uint8_t* next = prefetch_next ? next_chunk_block(job, g) : nullptr;
    for (int32_t t = 16 * g; t < 16 * g + n; ++t, vb += job.row_bytes) {
      if (next != nullptr) {
        prefetch_next_row(job, next);
        next += job.row_bytes;
      }
      __m256 w[QT];
#pragma GCC unroll 4
      for (int q = 0; q < QT; ++q) w[q] = _mm256_set1_ps(p[q * kChunkTokens + t]);
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) {
        const __m256 x = Load::at(vb, v0 + v);
#pragma GCC unroll 4
        for (int q = 0; q < QT; ++q) acc[q * NV + v] = _mm256_fmadd_ps(w[q], x, acc[q * NV + v]);
      }
    }
  }
#pragma GCC unroll 4
  for (int q = 0; q < QT; ++q) {
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v)
      _mm256_store_ps(job.records[i0 + q] + kRecordHeader + 8 * (v0 + v), acc[q * NV + v]);
  }
}

template <typename Load, int NV>
void values_cols(const ChunkJob& job, int32_t v0, int32_t g0) {
  int32_t i = 0;
  const auto first = [&] { return i == 0 && v0 == 0 && job.num_next_blocks > 0; };
  if constexpr (NV <= 2) {
    for (; i + 4 <= job.num_queries; i += 4) values_tile<Load, NV, 4>(job, i, v0, g0, first());
  }
  if constexpr (NV <= 4) {
    for (; i + 2 <= job.num_queries; i += 2) values_tile<Load, NV, 2>(job, i, v0, g0, first());
  }
  for (; i < job.num_queries; ++i) values_tile<Load, NV, 1>(job, i, v0, g0, first());
}

template <typename Load>
void values_pass(const ChunkJob& job, int32_t nv, int32_t g0) {
  for (int32_t v0 = 0; v0 < nv; v0 += 8) {
    switch (std::min(8, nv - v0)) {
      case 1: values_cols<Load, 1>(job, v0, g0); break;
      case 2: values_cols<Load, 2>(job, v0, g0); break;
      case 3: values_cols<Load, 3>(job, v0, g0); break;
      case 4: values_cols<Load, 4>(job, v0, g0); break;
      case 5: values_cols<Load, 5>(job, v0, g0); break;
      case 6: values_cols<Load, 6>(job, v0, g0); break;
      case 7: values_cols<Load, 7>(job, v0, g0); break;
      default: values_cols<Load, 8>(job, v0, g0); break;
    }
  }
}

// Without starts, the passes compiled for none (no start tests: a causal
// layer pays nothing for windows). Q8_0 and F16 keys have scores passes of
// their own (attention_q8_keys_TIER.cc, attention_f16_keys_TIER.cc). With
// starts, blocks before g0 (first_block) are never touched: every pass
// starts there.
template <typename Load>
void chunk(const ChunkJob& job) {
  const int32_t nv = job.head_dim / 8;
  if (job.start == nullptr) {
    if constexpr (std::is_same_v<Load, LoadQ8_0>) {
      scores_q8_keys(job, 0);
    } else if constexpr (std::is_same_v<Load, LoadF16>) {
      scores_f16_keys(job, 0);
    } else {
      scores_any<Load, false>(job, nv, 0);
    }
    soft_cap_scores(job);
    softmax_pass<false>(job, 0);
    if constexpr (std::is_same_v<Load, LoadQ8_0>) {
      values_q8(job, 0);
    } else {
      values_pass<Load>(job, nv, 0);
    }
    return;
  }
  const int32_t g0 = first_block(job);
  if constexpr (std::is_same_v<Load, LoadQ8_0>) {
    scores_q8_keys(job, g0);
  } else if constexpr (std::is_same_v<Load, LoadF16>) {
    scores_f16_keys(job, g0);
  } else {
    scores_any<Load, true>(job, nv, g0);
  }
  soft_cap_scores(job);
  softmax_pass<true>(job, g0);
  if constexpr (std::is_same_v<Load, LoadQ8_0>) {
    values_q8(job, g0);
  } else {
    values_pass<Load>(job, nv, g0);
  }
}

}  // namespace

void chunk_f32(const ChunkJob& job) { chunk<LoadF32>(job); }
void chunk_f16(const ChunkJob& job) { chunk<LoadF16>(job); }
void chunk_bf16(const ChunkJob& job) { chunk<LoadBF16>(job); }
void chunk_q8_0(const ChunkJob& job) { chunk<LoadQ8_0>(job); }

}  // namespace met::cpu::attn::avx2
