// AVX-512 chunk kernels (attn::avx512): 16 floats per vector, K and V
// converted on the fly (F16 with vcvtph2ps, BF16 by a shift; Q8_0 keys are
// scored by integer dots in attention_q8_keys_avx512.cc and Q8_0 values
// summed by them in attention_q8_values_avx512.cc, F16 keys, tokens in
// lanes, in attention_f16_keys_avx512.cc); a head_dim that is not a multiple of 16
// (stories260K's 8) is covered by masked loads (masked_avx512.h's, which
// keep ASan builds' code small). Contract in attention_chunk.h. Built with -march=x86-64-v4 + VNNI + BF16 only.
// Scores: a block's 16 tokens at a time, one accumulator per token, summed
// across lanes by one 16x16 transpose-add (no horizontal sum per token);
// queries go in pairs where head rows fit (head_dim <= 64), 8 tokens x 2
// queries per transpose, and in fours past that, 4 tokens x 4 queries, so
// each K vector is converted once for all of them (a query's bits are the
// same grouped or not).
// Values: register accumulators for a tile of queries x up to 8 vectors of
// the head row. Both passes software-prefetch the next block's K and this
// block's V, and the values pass prefetches the next chunk's K and V: the
// block table scatters rows, so the hardware prefetcher alone leaves decode
// latency-bound, and a pass that computes from cache leaves memory idle. Tokens outside a query's [start,
// limit) get p = 0; blocks before the first start are not read.
// core/avx512_intrinsics.h includes the intrinsics (GCC 12's headers warn).
// Threading: pure functions. Tested by tests/backend/attention_test.cc and
// attention_window_test.cc (per-query starts).
#include "core/avx512_intrinsics.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "backend/cpu/block_tokens.h"
#include "backend/cpu/kernels/attention_chunk.h"
#include "backend/cpu/kernels/masked_avx512.h"
#include "core/vector_exp.h"

namespace met::cpu::attn::avx512 {
namespace {

__mmask16 first_lanes(int32_t n) {
  return n >= 16 ? __mmask16{0xFFFF} : static_cast<__mmask16>((1u << n) - 1u);
}

// Lanes l with lo <= l < hi, any lo. REQUIRES: hi > 0.
__mmask16 lanes_in(int32_t lo, int32_t hi) {
  const uint32_t below_lo = lo <= 0 ? 0u : lo >= 16 ? 0xFFFFu : (1u << lo) - 1u;
  return static_cast<__mmask16>(first_lanes(hi) & ~below_lo);
}

// Elements [16v, 16v + 16) of a row, lanes outside `m` zero.
struct LoadF32 {
  static __m512 at(const uint8_t* row, int32_t v, __mmask16 m) {
    return masked::maskz_loadu_ps(m, row + 64 * v);
  }
};
struct LoadF16 {
  static __m512 at(const uint8_t* row, int32_t v, __mmask16 m) {
    return _mm512_cvtph_ps(masked::maskz_loadu_epi16(m, row + 32 * v));
  }
};
struct LoadBF16 {
  static __m512 at(const uint8_t* row, int32_t v, __mmask16 m) {
    const __m512i wide = _mm512_cvtepu16_epi32(masked::maskz_loadu_epi16(m, row + 32 * v));
    return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
  }
};
struct LoadQ8_0 {};  // a tag: Q8_0 keys and values have passes of their own

struct Lanes {
  int32_t nv;      // vectors per head row
  __mmask16 tail;  // lanes of the last one
  __mmask16 mask(int32_t v) const { return v == nv - 1 ? tail : __mmask16{0xFFFF}; }
};

// transpose_sum(r) lane t = sum of the lanes of r[kRowOf[t]].
constexpr int32_t kRowOf[16] = {0, 2, 1, 3, 8, 10, 9, 11, 4, 6, 5, 7, 12, 14, 13, 15};

[[gnu::always_inline]] inline __m512 transpose_sum(const __m512 (&r)[16]) {
  __m512 x[8], y[4], z[2];
  for (int i = 0; i < 8; ++i) {
    x[i] = _mm512_add_ps(_mm512_shuffle_f32x4(r[i], r[i + 8], 0x44),
                         _mm512_shuffle_f32x4(r[i], r[i + 8], 0xEE));
  }
  for (int i = 0; i < 4; ++i) {
    y[i] = _mm512_add_ps(_mm512_shuffle_f32x4(x[i], x[i + 4], 0x88),
                         _mm512_shuffle_f32x4(x[i], x[i + 4], 0xDD));
  }
  for (int i = 0; i < 2; ++i) {
    z[i] = _mm512_add_ps(_mm512_shuffle_ps(y[i], y[i + 2], 0x44),
                         _mm512_shuffle_ps(y[i], y[i + 2], 0xEE));
  }
  return _mm512_add_ps(_mm512_shuffle_ps(z[0], z[1], 0x88), _mm512_shuffle_ps(z[0], z[1], 0xDD));
}

constexpr int32_t kPrefetchBlocks = 2;  // how far ahead K is prefetched

// The 16 rows of block g of the chunk (tokens 16g .. 16g + 15) at `offset`.
const uint8_t* block_rows(const ChunkJob& job, int32_t g, int64_t offset) {
  return job.kv_base + job.blocks[g].value() * job.block_stride + offset;
}

void prefetch_block(const ChunkJob& job, int32_t g, int64_t offset) {
  const uint8_t* rows = block_rows(job, g, offset);
  for (int64_t b = 0; b < kBlockTokens * job.row_bytes; b += 64)
    _mm_prefetch(rows + b, _MM_HINT_T0);
}

// Lanes of vector v of a head row of NV vectors (NV > 0: known at compile
// time) or lanes.nv vectors (NV == 0).
template <int NV>
[[gnu::always_inline]] inline __mmask16 lane_mask(Lanes lanes, int32_t v) {
  if constexpr (NV > 0) return v == NV - 1 ? lanes.tail : __mmask16{0xFFFF};
  return lanes.mask(v);
}

// Prefetches, spread over the tokens so they overlap the arithmetic, the
// rows of `ahead` (K of a later block) and `values` (V of this block); null:
// none.
struct Prefetch {
  const uint8_t* ahead = nullptr;
  const uint8_t* values = nullptr;
};

[[gnu::always_inline]] inline void prefetch_row(const uint8_t* row, int64_t row_bytes) {
  for (int64_t b = 0; b < row_bytes; b += 64) _mm_prefetch(row + b, _MM_HINT_T0);
}

// Scores of the 16 tokens of block rows `k` for query q (slots past the
// query's limit are computed too: their lanes are dropped by the caller).
// NV > 0 keeps q in registers; NV == 0 handles any head_dim.
template <typename Load, int NV>
[[gnu::always_inline]] inline __m512 block_scores(const float* q, const uint8_t* k,
                                                  int64_t row_bytes, Lanes lanes, Prefetch pf) {
  constexpr int kQ = NV > 0 ? NV : 1;
  __m512 qv[kQ];
  if constexpr (NV > 0) {
    for (int v = 0; v < NV; ++v) qv[v] = masked::maskz_loadu_ps(lane_mask<NV>(lanes, v), q + 16 * v);
  }
  const int32_t nv = NV > 0 ? NV : lanes.nv;
  __m512 r[16];
#pragma GCC unroll 16
  for (int32_t t = 0; t < 16; ++t) {
    const uint8_t* row = k + t * row_bytes;
    if (pf.ahead != nullptr) prefetch_row(pf.ahead + t * row_bytes, row_bytes);
    if (pf.values != nullptr) prefetch_row(pf.values + t * row_bytes, row_bytes);
    __m512 acc = _mm512_setzero_ps();
#pragma GCC unroll 8
    for (int32_t v = 0; v < nv; ++v) {
      const __mmask16 m = lane_mask<NV>(lanes, v);
      const __m512 x = NV > 0 ? qv[v] : masked::maskz_loadu_ps(m, q + 16 * v);
      acc = _mm512_fmadd_ps(x, Load::at(row, v, m), acc);
    }
    r[kRowOf[t]] = acc;
  }
  return transpose_sum(r);
}

// Scores of two queries (q0, q1) for the 8 tokens [8h, 8h + 8) of block
// rows `k`, each K vector loaded and converted once for both (a GQA group's
// heads, or adjacent rows of a tile); pf as in block_scores, for these 8
// rows. Lanes 0-7 are q0's tokens, 8-15 q1's. Each (query, token) sum is
// the same fma chain and the same transpose_sum tree as in block_scores (a
// register's 16 lanes are summed by the same tree wherever it sits, and
// float addition commutes), so a query's bits do not depend on whether it
// was paired.
template <typename Load, int NV>
[[gnu::always_inline]] inline __m512 pair_scores(const float* q0, const float* q1,
                                                 const uint8_t* k, int64_t row_bytes, Lanes lanes,
                                                 int32_t h, Prefetch pf) {
  __m512 qa[NV], qb[NV];
#pragma GCC unroll 8
  for (int v = 0; v < NV; ++v) {
    qa[v] = masked::maskz_loadu_ps(lane_mask<NV>(lanes, v), q0 + 16 * v);
    qb[v] = masked::maskz_loadu_ps(lane_mask<NV>(lanes, v), q1 + 16 * v);
  }
  __m512 r[16];
#pragma GCC unroll 8
  for (int32_t j = 0; j < 8; ++j) {
    const int32_t t = 8 * h + j;
    const uint8_t* row = k + t * row_bytes;
    if (pf.ahead != nullptr) prefetch_row(pf.ahead + t * row_bytes, row_bytes);
    if (pf.values != nullptr) prefetch_row(pf.values + t * row_bytes, row_bytes);
    __m512 a = _mm512_setzero_ps();
    __m512 b = _mm512_setzero_ps();
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
      const __m512 x = Load::at(row, v, lane_mask<NV>(lanes, v));
      a = _mm512_fmadd_ps(qa[v], x, a);
      b = _mm512_fmadd_ps(qb[v], x, b);
    }
    r[kRowOf[j]] = a;
    r[kRowOf[8 + j]] = b;
  }
  return transpose_sum(r);
}

// Queries i and i + 1 of block g through pair_scores: scaled, each query's
// lanes below its limit stored. REQUIRES: both read some token of block g.
template <typename Load, int NV>
[[gnu::always_inline]] inline void pair_block(const ChunkJob& job, int32_t i, int32_t g,
                                              const uint8_t* k, Lanes lanes, Prefetch pf) {
  const int32_t n0 = job.limit[i] - 16 * g;
  const int32_t n1 = job.limit[i + 1] - 16 * g;
  const __m512 scale = _mm512_set1_ps(job.scale);
  float* s0 = job.scores + i * kChunkTokens + 16 * g;
  float* s1 = s0 + kChunkTokens;
  for (int32_t h = 0; h < 2 && 8 * h < std::max(n0, n1); ++h) {
    const __m512 s = _mm512_mul_ps(
        pair_scores<Load, NV>(job.q[i], job.q[i + 1], k, job.row_bytes, lanes, h, pf), scale);
    const auto m0 = static_cast<__mmask8>(first_lanes(std::clamp(n0 - 8 * h, 0, 8)));
    const auto m1 = static_cast<__mmask8>(first_lanes(std::clamp(n1 - 8 * h, 0, 8)));
    masked::mask_storeu_ps(s0 + 8 * h, m0, _mm512_castps512_ps256(s));
    masked::mask_storeu_ps(s1 + 8 * h, m1, _mm512_extractf32x8_ps(s, 1));
  }
}

// Scores of four queries q[0..3] for the 4 tokens [4h, 4h + 4) of block
// rows `k`, each K vector loaded and converted once for all four (a wide
// head's GQA group: its queries cannot stay in registers, so they are read
// from L1 instead). Lane 4a + j is query a's token 4h + j. Each (query,
// token) sum is the fma chain and the transpose_sum tree of block_scores,
// so a query's bits do not depend on its neighbours. pf as in block_scores,
// for these 4 rows.
// Not forced inline nor unrolled by pragma: clang's ASan check build spent
// over 10 minutes on the forty unrolled copies (GCC's code was 7% faster in
// cache, the same from DRAM).
template <typename Load, int NV>
inline __m512 quad_scores(const float* const* q, const uint8_t* k, int64_t row_bytes, Lanes lanes, int32_t h,
                          Prefetch pf) {
  const int32_t nv = NV > 0 ? NV : lanes.nv;
  __m512 r[16];
  for (int32_t j = 0; j < 4; ++j) {
    const int32_t t = 4 * h + j;
    const uint8_t* row = k + t * row_bytes;
    if (pf.ahead != nullptr) prefetch_row(pf.ahead + t * row_bytes, row_bytes);
    if (pf.values != nullptr) prefetch_row(pf.values + t * row_bytes, row_bytes);
    __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    for (int32_t v = 0; v < nv; ++v) {
      const __mmask16 m = lane_mask<NV>(lanes, v);
      const __m512 x = Load::at(row, v, m);
      for (int32_t a = 0; a < 4; ++a) acc[a] = _mm512_fmadd_ps(masked::maskz_loadu_ps(m, q[a] + 16 * v), x, acc[a]);
    }
    for (int32_t a = 0; a < 4; ++a) r[kRowOf[4 * a + j]] = acc[a];
  }
  return transpose_sum(r);
}

// Queries i .. i + 3 of block g through quad_scores: scaled, each query's
// lanes below its limit stored. REQUIRES: all four read some token of block g.
template <typename Load, int NV>
[[gnu::always_inline]] inline void quad_block(const ChunkJob& job, int32_t i, int32_t g, const uint8_t* k,
                                              Lanes lanes, Prefetch pf) {
  int32_t most = 0;
  for (int32_t a = 0; a < 4; ++a) most = std::max(most, job.limit[i + a] - 16 * g);
  const __m512 scale = _mm512_set1_ps(job.scale);
  for (int32_t h = 0; h < 4 && 4 * h < most; ++h) {
    alignas(64) float s[16];  // query a's 4 scores at s[4a]
    _mm512_store_ps(s, _mm512_mul_ps(quad_scores<Load, NV>(job.q + i, k, job.row_bytes, lanes, h, pf), scale));
    pf = Prefetch{};  // the first tokens' rows issued them all
    for (int32_t a = 0; a < 4; ++a) {
      const int32_t n = job.limit[i + a] - 16 * g - 4 * h;
      const auto m = static_cast<__mmask8>(first_lanes(std::clamp(n, 0, 4)));
      masked::mask_storeu_ps(job.scores + (i + a) * kChunkTokens + 16 * g + 4 * h, m, _mm_load_ps(s + 4 * a));
    }
  }
}

template <typename Load, int NV, bool kStarts>
void scores_pass(const ChunkJob& job, Lanes lanes, int32_t g0) {
  const int32_t groups = (job.num_tokens + 15) / 16;
  const __m512 scale = _mm512_set1_ps(job.scale);
  for (int32_t g = g0; g < std::min(groups, g0 + kPrefetchBlocks); ++g)
    prefetch_block(job, g, job.k_offset);
  for (int32_t g = g0; g < groups; ++g) {
    Prefetch pf{ahead_rows(job, g + kPrefetchBlocks, job.k_offset),
                block_rows(job, g, job.v_offset)};
    const uint8_t* k = block_rows(job, g, job.k_offset);
    const auto reads = [&](int32_t i) {  // query i reads some token of block g
      return job.limit[i] > 16 * g && !(kStarts && job.start[i] >= 16 * (g + 1));
    };
    int32_t i = 0;
    if constexpr (NV > 0 && NV <= 4) {
      for (; i + 2 <= job.num_queries && reads(i) && reads(i + 1); i += 2) {
        pair_block<Load, NV>(job, i, g, k, lanes, pf);
        pf = Prefetch{};  // the first pair of the block issues them
      }
    } else {
      for (; i + 4 <= job.num_queries && reads(i) && reads(i + 1) && reads(i + 2) && reads(i + 3); i += 4) {
        quad_block<Load, NV>(job, i, g, k, lanes, pf);
        pf = Prefetch{};
      }
    }
    for (; i < job.num_queries; ++i) {
      const int32_t n = job.limit[i] - 16 * g;
      if (!reads(i)) continue;
      const __m512 s = block_scores<Load, NV>(job.q[i], k, job.row_bytes, lanes, pf);
      pf = Prefetch{};  // the first query of the block issues them
      masked::mask_storeu_ps(job.scores + i * kChunkTokens + 16 * g, first_lanes(n),
                            _mm512_mul_ps(s, scale));
    }
  }
}

template <typename Load, bool kStarts>
void scores_any(const ChunkJob& job, Lanes lanes, int32_t g0) {
  switch (lanes.nv) {
    case 1: scores_pass<Load, 1, kStarts>(job, lanes, g0); break;
    case 2: scores_pass<Load, 2, kStarts>(job, lanes, g0); break;
    case 3: scores_pass<Load, 3, kStarts>(job, lanes, g0); break;
    case 4: scores_pass<Load, 4, kStarts>(job, lanes, g0); break;
    case 5: scores_pass<Load, 5, kStarts>(job, lanes, g0); break;
    case 6: scores_pass<Load, 6, kStarts>(job, lanes, g0); break;
    case 7: scores_pass<Load, 7, kStarts>(job, lanes, g0); break;
    case 8: scores_pass<Load, 8, kStarts>(job, lanes, g0); break;
    default: scores_pass<Load, 0, kStarts>(job, lanes, g0); break;
  }
}

// Scores of [start, limit) become exp(score - max); the rest of [16 g0,
// num_tokens) zero. !kStarts: every start is 0 and g0 is 0.
template <bool kStarts>
void softmax_pass(const ChunkJob& job, int32_t g0) {
  for (int32_t i = 0; i < job.num_queries; ++i) {
    float* s = job.scores + i * kChunkTokens;
    const int32_t lo = kStarts ? job.start[i] : 0;
    const int32_t n = job.limit[i];
    const auto lanes = [&](int32_t t) {
      return kStarts ? lanes_in(lo - t, n - t) : first_lanes(n - t);
    };
    __m512 vmax = _mm512_set1_ps(-INFINITY);
    for (int32_t t = 16 * g0; t < n; t += 16) {
      const __mmask16 m = lanes(t);
      vmax = _mm512_mask_max_ps(vmax, m, vmax, masked::maskz_loadu_ps(m, s + t));
    }
    const float mx = _mm512_reduce_max_ps(vmax);
    __m512 sum = _mm512_setzero_ps();
    int32_t t = 16 * g0;
    for (; t < n; t += 16) {
      const __mmask16 m = lanes(t);
      const __m512 x = _mm512_sub_ps(masked::maskz_loadu_ps(m, s + t), _mm512_set1_ps(mx));
      const __m512 e = _mm512_maskz_mov_ps(m, exp_avx512(x));
      _mm512_storeu_ps(s + t, e);
      sum = _mm512_add_ps(sum, e);
    }
    for (; t < job.num_tokens; t += 16) _mm512_storeu_ps(s + t, _mm512_setzero_ps());
    job.records[i][0] = mx;
    job.records[i][1] = _mm512_reduce_add_ps(sum);
  }
}

// acc of queries [i0, i0 + QT) over vectors [v0, v0 + NV) of the head row,
// in registers (every loop over q and v is unrolled). `prefetch_next`: token
// t's step also prefetches the next chunk's token t (next_chunk_block).
template <typename Load, int NV, int QT>
void values_tile(const ChunkJob& job, int32_t i0, int32_t v0, Lanes lanes, int32_t g0,
                 bool prefetch_next) {
  __m512 acc[QT * NV];
  __mmask16 m[NV];
#pragma GCC unroll 32
  for (int a = 0; a < QT * NV; ++a) acc[a] = _mm512_setzero_ps();
#pragma GCC unroll 8
  for (int v = 0; v < NV; ++v) m[v] = lanes.mask(v0 + v);
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
      __m512 w[QT];
#pragma GCC unroll 4
      for (int q = 0; q < QT; ++q) w[q] = _mm512_set1_ps(p[q * kChunkTokens + t]);
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) {
        const __m512 x = Load::at(vb, v0 + v, m[v]);
#pragma GCC unroll 4
        for (int q = 0; q < QT; ++q) acc[q * NV + v] = _mm512_fmadd_ps(w[q], x, acc[q * NV + v]);
      }
    }
  }
#pragma GCC unroll 4
  for (int q = 0; q < QT; ++q) {
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
      _mm512_store_ps(job.records[i0 + q] + kRecordHeader + 16 * (v0 + v), acc[q * NV + v]);
    }
  }
}

template <typename Load, int NV>
void values_cols(const ChunkJob& job, int32_t v0, Lanes lanes, int32_t g0) {
  int32_t i = 0;
  const auto first = [&] { return i == 0 && v0 == 0 && job.num_next_blocks > 0; };
  if constexpr (NV <= 4) {
    for (; i + 4 <= job.num_queries; i += 4) values_tile<Load, NV, 4>(job, i, v0, lanes, g0, first());
  }
  for (; i + 2 <= job.num_queries; i += 2) values_tile<Load, NV, 2>(job, i, v0, lanes, g0, first());
  for (; i < job.num_queries; ++i) values_tile<Load, NV, 1>(job, i, v0, lanes, g0, first());
}

// Columns in groups of 8 vectors, or of 4 where a tile of 4 queries (a wide
// GQA group) then converts each V vector once for all four instead of once
// per pair.
template <typename Load>
void values_pass(const ChunkJob& job, Lanes lanes, int32_t g0) {
  const int32_t width = job.num_queries >= 4 ? 4 : 8;
  for (int32_t v0 = 0; v0 < lanes.nv; v0 += width) {
    switch (std::min(width, lanes.nv - v0)) {
      case 1: values_cols<Load, 1>(job, v0, lanes, g0); break;
      case 2: values_cols<Load, 2>(job, v0, lanes, g0); break;
      case 3: values_cols<Load, 3>(job, v0, lanes, g0); break;
      case 4: values_cols<Load, 4>(job, v0, lanes, g0); break;
      case 5: values_cols<Load, 5>(job, v0, lanes, g0); break;
      case 6: values_cols<Load, 6>(job, v0, lanes, g0); break;
      case 7: values_cols<Load, 7>(job, v0, lanes, g0); break;
      default: values_cols<Load, 8>(job, v0, lanes, g0); break;
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
  const int32_t nv = (job.head_dim + 15) / 16;
  const Lanes lanes{nv, first_lanes(job.head_dim - (nv - 1) * 16)};
  if (job.start == nullptr) {
    if constexpr (std::is_same_v<Load, LoadQ8_0>) {
      scores_q8_keys(job, 0);
    } else if constexpr (std::is_same_v<Load, LoadF16>) {
      scores_f16_keys(job, 0);
    } else {
      scores_any<Load, false>(job, lanes, 0);
    }
    soft_cap_scores(job);
    softmax_pass<false>(job, 0);
    if constexpr (std::is_same_v<Load, LoadQ8_0>) {
      values_q8(job, 0);
    } else {
      values_pass<Load>(job, lanes, 0);
    }
    return;
  }
  const int32_t g0 = first_block(job);
  if constexpr (std::is_same_v<Load, LoadQ8_0>) {
    scores_q8_keys(job, g0);
  } else if constexpr (std::is_same_v<Load, LoadF16>) {
    scores_f16_keys(job, g0);
  } else {
    scores_any<Load, true>(job, lanes, g0);
  }
  soft_cap_scores(job);
  softmax_pass<true>(job, g0);
  if constexpr (std::is_same_v<Load, LoadQ8_0>) {
    values_q8(job, g0);
  } else {
    values_pass<Load>(job, lanes, g0);
  }
}

}  // namespace

void chunk_f32(const ChunkJob& job) { chunk<LoadF32>(job); }
void chunk_f16(const ChunkJob& job) { chunk<LoadF16>(job); }
void chunk_bf16(const ChunkJob& job) { chunk<LoadBF16>(job); }
void chunk_q8_0(const ChunkJob& job) { chunk<LoadQ8_0>(job); }

}  // namespace met::cpu::attn::avx512
