// What the AVX2-family kernels of the packed K-quant layouts
// (WeightLayout::kQ4_Kx16 and the others of kquant_x16_layout.h) share:
// loads of a unit's half-group tables and of Q8_K activations, the Q6_K
// operands and the codes' offset taken out through the per-16 sums, the
// super-block steps of Q4_K/Q5_K, Q6_K and IQ4_XS over a tier's integer
// kernels, and the tile driver over a layout L (static kUnitBytes; unit_step<R>(unit, h, a,
// acc): acc[r] += row r's terms of half h of one super-block unit). Used by
// matmul_kx16_avx2.cc (vpmaddubsw) and matmul_kx16_avxvnni.cc (vpdpbusd).
// Include only from translation units built with the AVX2 flags or a
// superset. The helpers are always inlined and the driver's instances take
// each TU's own layout types (anonymous namespaces), so no copy built for
// one ISA serves another.
// Threading: pure functions. Tested by tests/backend/packed_weights_test.cc.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "backend/cpu/kernels/half_groups_avx2.h"
#include "backend/cpu/kernels/kquant_x16_layout.h"
#include "backend/cpu/kernels/matmul_kernels.h"
#include "backend/cpu/kernels/next_group_prefetch.h"
#include "tensor/block_types.h"

namespace met::cpu::avx2 {

inline constexpr int kKx16TileRows = 4;
inline constexpr size_t kActQs = sizeof(float);            // BlockQ8_K::qs
inline constexpr size_t kActBsums = sizeof(float) + kQkK;  // BlockQ8_K::bsums

[[gnu::always_inline]] inline __m256i bcast32(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof(v));
  return _mm256_set1_epi32(v);
}

[[gnu::always_inline]] inline __m256i load_half(const uint8_t* line, int h) {
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(line + 32 * h));
}

// The 8 bytes of half h of a 16-row byte table, widened to int32 lanes.
[[gnu::always_inline]] inline __m256i widen8(const uint8_t* table16, int h) {
  return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(table16 + kHalfGroupRows * h)));
}

// The 8 fp16 of half h of a 16-row fp16 table, as floats.
[[gnu::always_inline]] inline __m256 half_ph8(const uint8_t* table16, int h) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(table16 + 2 * kHalfGroupRows * h)));
}

[[gnu::always_inline]] inline float load_f32(const uint8_t* p) {
  float v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// The operands of line jj of half h of groups (hs, q, k), k < 4, of a
// Q6_Kx16 unit: inputs 128 hs + 32k + 16q + 4jj .. +3, 6-bit codes (k = 0,
// 2: the low and high nibbles of the first ql line with qh bits 0-1 and
// 4-5; k = 1, 3: of the second ql line with qh bits 2-3 and 6-7), from one
// load of each line.
[[gnu::always_inline]] inline void q6_k_operands(const uint8_t* unit, int h, int hs, int q, int jj, __m256i (&w)[4]) {
  const __m256i low_mask = _mm256_set1_epi8(0x0F), high_mask = _mm256_set1_epi8(0x30);
  const size_t line = static_cast<size_t>(4 * q + jj);
  const __m256i a = load_half(unit + kx16::kQ6_KQl + kx16::kLine * (16 * static_cast<size_t>(hs) + line), h);
  const __m256i b = load_half(unit + kx16::kQ6_KQl + kx16::kLine * (16 * static_cast<size_t>(hs) + 8 + line), h);
  const __m256i qh = load_half(unit + kx16::kQ6_KQh + kx16::kLine * (8 * static_cast<size_t>(hs) + line), h);
  // qh bits 2k, 2k + 1 to bits 4, 5.
  w[0] = _mm256_or_si256(_mm256_and_si256(a, low_mask), _mm256_and_si256(_mm256_slli_epi16(qh, 4), high_mask));
  w[1] = _mm256_or_si256(_mm256_and_si256(b, low_mask), _mm256_and_si256(_mm256_slli_epi16(qh, 2), high_mask));
  w[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(a, 4), low_mask), _mm256_and_si256(qh, high_mask));
  w[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(b, 4), low_mask),
                         _mm256_and_si256(_mm256_srli_epi16(qh, 2), high_mask));
}

// Half h's scales of groups 8hs + 2k and 8hs + 2k + 1 (k < 4) from a Q6_Kx16
// or Q3_Kx16 pair table at `scales`, as int16 pairs; and isum += -2^kShift
// x each pair against the activation rows' per-16 sums (the codes' offset,
// 32 or 4, taken out).
template <int kShift, int R>
[[gnu::always_inline]] inline void offset_pairs(const uint8_t* scales, int h, int hs, const uint8_t* const (&a)[R],
                                                __m256i (&pairs)[4], __m256i (&isum)[R]) {
  for (int k = 0; k < 4; ++k) {
    const uint8_t* p = scales + 32 * static_cast<size_t>(4 * hs + k) + 16 * h;
    pairs[k] = _mm256_cvtepi8_epi16(_mm_load_si128(reinterpret_cast<const __m128i*>(p)));
    const __m256i offset = _mm256_sub_epi16(_mm256_setzero_si256(), _mm256_slli_epi16(pairs[k], kShift));
    for (int r = 0; r < R; ++r) {
      const uint8_t* bsums = a[r] + kActBsums + 4 * static_cast<size_t>(4 * hs + k);
      isum[r] = _mm256_add_epi32(isum[r], _mm256_madd_epi16(offset, bcast32(bsums)));
    }
  }
}

// The super-block steps (L::unit_step for kx16_one_row and kx16_half_tile)
// of Q4_K/Q5_K, Q6_K and IQ4_XS, over a tier's integer kernels Dots:
//   scale_min_chunk<F, R>(unit, h, c, a, lo, hi): lo, hi = the int32 dots
//     of sub-blocks 2c and 2c + 1 of half h for each activation row;
//   q6_k_groups<R>(unit, h, hs, q, pairs, a, isum): isum += the dots of
//     groups 8hs + 2k + q, k < 4, times their scales (`pairs`);
//   iq4_xs_group<R>(unit, h, g, a, isum): isum += group g's dots times its
//     scales.
// The scales, mins and the one float step per super-block (d_a d * I -
// d_a dmin * M, as the reference) are the same on every tier.
template <class F, class Dots>
struct ScaleMinX16 {
  static constexpr size_t kUnitBytes = F::kUnitBytes;
  // acc[r] += row r's terms of half h of the super-block at `unit`.
  template <int R>
  static void unit_step(const uint8_t* unit, int h, const uint8_t* const (&a)[R], __m256 (&acc)[R]) {
    __m256i isum[R], msum[R];
    for (int r = 0; r < R; ++r) isum[r] = msum[r] = _mm256_setzero_si256();
    for (int c = 0; c < 4; ++c) {
      __m256i lo[R], hi[R];
      Dots::template scale_min_chunk<F, R>(unit, h, c, a, lo, hi);
      const __m256i sc_lo = widen8(unit + F::kScales + 16 * (2 * c), h);
      const __m256i sc_hi = widen8(unit + F::kScales + 16 * (2 * c + 1), h);
      const __m256i m_lo = widen8(unit + F::kMins + 16 * (2 * c), h);
      const __m256i m_hi = widen8(unit + F::kMins + 16 * (2 * c + 1), h);
      const __m256i mins_lo = _mm256_or_si256(m_lo, _mm256_slli_epi32(m_lo, 16));  // (m, m) int16 pairs
      const __m256i mins_hi = _mm256_or_si256(m_hi, _mm256_slli_epi32(m_hi, 16));
      for (int r = 0; r < R; ++r) {
        isum[r] = _mm256_add_epi32(isum[r], _mm256_add_epi32(_mm256_mullo_epi32(lo[r], sc_lo),
                                                             _mm256_mullo_epi32(hi[r], sc_hi)));
        const uint8_t* bsums = a[r] + kActBsums + 8 * static_cast<size_t>(c);  // sums 4c .. 4c + 3
        msum[r] = _mm256_add_epi32(msum[r], _mm256_add_epi32(_mm256_madd_epi16(mins_lo, bcast32(bsums)),
                                                             _mm256_madd_epi16(mins_hi, bcast32(bsums + 4))));
      }
    }
    const __m256 d = half_ph8(unit + F::kD, h), dmin = half_ph8(unit + F::kDmin, h);
    for (int r = 0; r < R; ++r) {
      const __m256 da = _mm256_set1_ps(load_f32(a[r]));
      acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[r]), _mm256_mul_ps(d, da), acc[r]);
      acc[r] = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(msum[r]), _mm256_mul_ps(dmin, da), acc[r]);
    }
  }
};

template <class Dots>
struct Q6_Kx16 {
  static constexpr size_t kUnitBytes = kx16::kQ6_KUnitBytes;
  template <int R>
  static void unit_step(const uint8_t* unit, int h, const uint8_t* const (&a)[R], __m256 (&acc)[R]) {
    __m256i isum[R];
    for (int r = 0; r < R; ++r) isum[r] = _mm256_setzero_si256();
    for (int hs = 0; hs < 2; ++hs) {
      __m256i pairs[4];  // scales of groups 8hs + 2k (q = 0) and 8hs + 2k + 1 (q = 1) as int16 pairs
      offset_pairs<5, R>(unit + kx16::kQ6_KScales, h, hs, a, pairs, isum);
      for (int q = 0; q < 2; ++q) Dots::template q6_k_groups<R>(unit, h, hs, q, pairs, a, isum);
    }
    const __m256 d = half_ph8(unit + kx16::kQ6_KD, h);
    for (int r = 0; r < R; ++r) {
      const __m256 da = _mm256_set1_ps(load_f32(a[r]));
      acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[r]), _mm256_mul_ps(d, da), acc[r]);
    }
  }
};

template <class Dots>
struct Iq4XsX16 {
  static constexpr size_t kUnitBytes = kx16::kIq4XsUnitBytes;
  template <int R>
  static void unit_step(const uint8_t* unit, int h, const uint8_t* const (&a)[R], __m256 (&acc)[R]) {
    __m256i isum[R];
    for (int r = 0; r < R; ++r) isum[r] = _mm256_setzero_si256();
    for (int g = 0; g < 8; ++g) Dots::template iq4_xs_group<R>(unit, h, g, a, isum);
    const __m256 d = half_ph8(unit + kx16::kIq4XsD, h);
    for (int r = 0; r < R; ++r) {
      const __m256 da = _mm256_set1_ps(load_f32(a[r]));
      acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[r]), _mm256_mul_ps(d, da), acc[r]);
    }
  }
};

// y rows [i0, i0 + R), outputs n0 .. n0 + 7 where `store_mask` is set, from
// half h of the group at `group`.
template <class L, int R>
void kx16_half_tile(const MatmulTask& t, int64_t i0, const uint8_t* group, int h, int64_t n0,
                    __m256i store_mask) {
  const int64_t num_blocks = t.cols / kQkK;
  const uint8_t* a[R];
  for (int r = 0; r < R; ++r) a[r] = t.act + static_cast<size_t>(i0 + r) * t.act_row_bytes;
  __m256 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
  // Walks: every row tile of both halves (at m = 1 too: the second half's
  // walk computes from cache while the first's prefetches would idle).
  const int64_t tiles = (t.m + kKx16TileRows - 1) / kKx16TileRows;
  const NextGroupShare share = next_group_share(2 * tiles, h * tiles + i0 / kKx16TileRows, group, t.weight_row_bytes,
                                                (n0 / kx16::kRows + 1) * kx16::kRows < t.n_end);
  const uint8_t* unit = group;
  for (int64_t b = 0; b < num_blocks; ++b, unit += L::kUnitBytes) {
    prefetch_share(share, b, static_cast<size_t>(unit - group), L::kUnitBytes);
    L::template unit_step<R>(unit, h, a, acc);
    for (int r = 0; r < R; ++r) a[r] += sizeof(BlockQ8_K);
  }
  for (int r = 0; r < R; ++r) _mm256_maskstore_ps(t.y + (i0 + r) * t.y_stride + n0, store_mask, acc[r]);
}

// One activation row (batch-1 decode): each group walked once, unit by
// unit, both halves together, so its cache lines stream whole in one pass,
// each unit's lines prefetched kOneRowPrefetchUnits units ahead (past a
// group's end into the next, which follows it). Each half's arithmetic is
// L::unit_step's, so the outputs are those of the two walks bit for bit.
// Two half walks, each reading half of every line, ran batch-1 decode of
// the medium llama at 44-77% of the read ceiling (Q4_K 114-120 tok/s); this
// walk without the prefetch made Q4_K 5-16% slower, with it 138-183.
inline constexpr size_t kOneRowPrefetchUnits = 2;

template <class L>
void kx16_one_row(const MatmulTask& t) {
  const int64_t num_blocks = t.cols / kQkK;
  for (int64_t g = t.n_begin / kx16::kRows; g * kx16::kRows < t.n_end; ++g) {
    const uint8_t* unit = t.weights + static_cast<size_t>(g) * t.weight_row_bytes;
    const uint8_t* a[1] = {t.act};
    __m256 acc0[1] = {_mm256_setzero_ps()}, acc1[1] = {_mm256_setzero_ps()};
    for (int64_t b = 0; b < num_blocks; ++b, unit += L::kUnitBytes) {
      for (size_t line = 0; line < L::kUnitBytes; line += kx16::kLine) {
        _mm_prefetch(reinterpret_cast<const char*>(unit + kOneRowPrefetchUnits * L::kUnitBytes + line), _MM_HINT_T0);
      }
      L::template unit_step<1>(unit, 0, a, acc0);
      L::template unit_step<1>(unit, 1, a, acc1);
      a[0] += sizeof(BlockQ8_K);
    }
    const int64_t n0 = g * kx16::kRows;
    _mm256_maskstore_ps(t.y + n0, half_store_mask(t, n0), acc0[0]);
    _mm256_maskstore_ps(t.y + n0 + kHalfGroupRows, half_store_mask(t, n0 + kHalfGroupRows), acc1[0]);
  }
}

template <class L>
void run_kx16_halves(const MatmulTask& t) {
  if (t.m == 1) {
    kx16_one_row<L>(t);
    return;
  }
  static constexpr HalfTileFn kTiles[kKx16TileRows] = {kx16_half_tile<L, 1>, kx16_half_tile<L, 2>,
                                                       kx16_half_tile<L, 3>, kx16_half_tile<L, 4>};
  run_half_groups(t, kTiles);
}

}  // namespace met::cpu::avx2
