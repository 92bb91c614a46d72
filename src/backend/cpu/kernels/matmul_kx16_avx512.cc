// AVX-512 VNNI matmul for the packed K-quant layouts WeightLayout::kQ4_Kx16,
// kQ5_Kx16, kQ6_Kx16, kIq4XsX16, kQ3_Kx16 and kQ2_Kx16 (packed_weights.h) against Q8_K
// activations. Each aligned
// 64-byte load of a unit holds 4 bytes of each of the 16 rows of a group, so
// after a mask or shift it is the unsigned operand of one vpdpbusd whose 16
// int32 lanes are the 16 output rows, against 4 activation codes broadcast.
//   Q4_Kx16: per chunk of 64 inputs, 8 loads give 16 operands (low nibbles:
//     sub-block 2c, high: 2c + 1); per activation row two chains of 8
//     vpdpbusd, each sub-block's dot times its 16 scales (bytes widened with
//     one vpmovzxbd, vpmulld: exact in int32), the mins as vpdpwssd of (m, m)
//     pairs against the activation's per-16 sums. One float step per
//     super-block: d_a d * I - d_a dmin * M, as the reference.
//   Q5_Kx16: as Q4_Kx16, each operand's bit 4 merged in from a load of qh
//     (a shift and a vpternlogd).
//   Q6_Kx16: per half and pass of 32 inputs, 12 loads (ql, ql, qh) give 16
//     operands of 6-bit codes (vpternlogd merges each nibble with its two
//     high bits); per activation row four chains of 4 vpdpbusd (one per
//     group of 16), times the group's scale (vpmulld), and the offset of 32
//     as vpdpwssd of the scale pairs times -32 against the per-16 sums. One
//     float step per super-block: d_a d * I.
//   Iq4XsX16: per group of 32 inputs, 4 loads give 8 operands (low and high
//     nibbles) through one vpshufb of kIq4Values + 128; per activation row
//     two chains of 4 vpdpbusd, their sum times the group's 16 scales
//     (ls - 32, vpmulld), and the +128 taken back out as vpdpwssd of
//     (-128 (ls - 32)) pairs against the group's two per-16 sums. One float
//     step per super-block: d_a d * I.
//   Q3_Kx16: as Q6_Kx16, per half and pass 8 loads (qs, hmask) give 16
//     operands of 3-bit codes (a shift of qs, and the hmask bit shifted to
//     bit 2 and merged with a vpternlogd), the offset of 4 as vpdpwssd of
//     the scale pairs times -4 against the per-16 sums.
//   Q2_Kx16: as Q3_Kx16 without the hmask (4 loads of qs a pass), the
//     scales and mins the low and high nibbles of the group bytes' int16
//     pairs; the mins as vpdpwssd against the per-16 sums, one float step
//     per super-block: d_a d * I - d_a dmin * M.
// The operands are decoded once per tile of up to 4 activation rows, so a
// group is read from memory once for the whole tile; the first tile of a
// group prefetches kKx16PrefetchBytes ahead (a thread's share is one sequential
// stream of units). Outputs outside [n_begin, n_end) are masked off at the
// store. A row's arithmetic is the same whatever tile it lands in, so its
// outputs are bit-identical alone or in a batch.
// Threading: pure functions. Tested by tests/backend/packed_weights_test.cc.
#include "core/avx512_intrinsics.h"

#include <cstring>

#include "backend/cpu/kernels/kquant_x16_layout.h"
#include "backend/cpu/kernels/kx16_decode_avx512.h"
#include "backend/cpu/kernels/matmul_kernels.h"
#include "backend/cpu/kernels/next_group_prefetch.h"
#include "tensor/block_types.h"

namespace met::cpu::avx512 {
namespace {

constexpr int kTileRows = 4;
constexpr size_t kActQs = sizeof(float);                  // BlockQ8_K::qs
constexpr size_t kActBsums = sizeof(float) + kQkK;        // BlockQ8_K::bsums

// How far ahead the first tile of a group prefetches: 6 KiB streamed 4-10%
// more than kPrefetchBytes (2 KiB, under one Q4_Kx16 unit) on Q4_Kx16 and
// Q6_Kx16 at 2 threads (1024 x 4096 copies, the two alternated every pass
// in one process, Zen 5); 10 KiB no more than 6.
constexpr size_t kKx16PrefetchBytes = 6144;

void prefetch_ahead(const uint8_t* unit, size_t unit_bytes) {
  for (size_t line = 0; line < unit_bytes; line += kx16::kLine) {
    _mm_prefetch(reinterpret_cast<const char*>(unit + kKx16PrefetchBytes + line), _MM_HINT_T0);
  }
}

// Chunk c (inputs 64c .. 64c + 63) of a Q4_Kx16 or Q5_Kx16 unit for R
// activation super-blocks `a`: isum += scale-weighted dots, msum += mins x
// sums.
template <class F, int R>
[[gnu::always_inline]] inline void scale_min_chunk(const uint8_t* unit, int c, const uint8_t* const (&a)[R],
                                                   __m512i (&isum)[R], __m512i (&msum)[R]) {
  __m512i lo[8], hi[8];
  scale_min_decode<F>(unit, c, lo, hi);
  const __m512i sc_lo = scale_min_bytes(unit, F::kScales, 2 * c);
  const __m512i sc_hi = scale_min_bytes(unit, F::kScales, 2 * c + 1);
  const __m512i m_lo = scale_min_bytes(unit, F::kMins, 2 * c), m_hi = scale_min_bytes(unit, F::kMins, 2 * c + 1);
  const __m512i mins_lo = _mm512_or_si512(m_lo, _mm512_slli_epi32(m_lo, 16));  // (m, m) int16 pairs
  const __m512i mins_hi = _mm512_or_si512(m_hi, _mm512_slli_epi32(m_hi, 16));
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    const uint8_t* qs = a[r] + kActQs + 64 * static_cast<size_t>(c);
    __m512i dot_lo = _mm512_setzero_si512(), dot_hi = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) {
      dot_lo = _mm512_dpbusd_epi32(dot_lo, lo[j], bcast32(qs + 4 * j));
      dot_hi = _mm512_dpbusd_epi32(dot_hi, hi[j], bcast32(qs + 32 + 4 * j));
    }
    isum[r] = _mm512_add_epi32(isum[r], _mm512_add_epi32(_mm512_mullo_epi32(dot_lo, sc_lo),
                                                         _mm512_mullo_epi32(dot_hi, sc_hi)));
    const uint8_t* bsums = a[r] + kActBsums + 8 * static_cast<size_t>(c);  // sums 4c .. 4c + 3
    msum[r] = _mm512_dpwssd_epi32(msum[r], mins_lo, bcast32(bsums));
    msum[r] = _mm512_dpwssd_epi32(msum[r], mins_hi, bcast32(bsums + 4));
  }
}

template <class F>
struct ScaleMinX16 {
  static constexpr size_t kUnitBytes = F::kUnitBytes;
  // acc[r] += row r's terms of the super-block at `unit`.
  template <int R>
  static void unit_step(const uint8_t* unit, const uint8_t* const (&a)[R], __m512 (&acc)[R]) {
    __m512i isum[R], msum[R];
    for (int r = 0; r < R; ++r) isum[r] = msum[r] = _mm512_setzero_si512();
    for (int c = 0; c < 4; ++c) scale_min_chunk<F, R>(unit, c, a, isum, msum);
    const __m512 d = load_ph16(unit + F::kD), dmin = load_ph16(unit + F::kDmin);
    for (int r = 0; r < R; ++r) {
      const __m512 da = _mm512_set1_ps(load_f32(a[r]));
      acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[r]), _mm512_mul_ps(d, da), acc[r]);
      acc[r] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(msum[r]), _mm512_mul_ps(dmin, da), acc[r]);
    }
  }
};

// isum[r] += sum over k < 4 of scales[k] x the dot of operands w[0 .. 3][k]
// with activation row r's codes at `offset` + 32k (four groups of 16
// inputs: the pass Q6_Kx16 and Q3_Kx16 share).
template <int R>
[[gnu::always_inline]] inline void scaled_group_dots(const __m512i (&w)[4][4], const __m512i (&scales)[4],
                                                     const uint8_t* const (&a)[R], size_t offset,
                                                     __m512i (&isum)[R]) {
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    const uint8_t* qs = a[r] + kActQs + offset;
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      __m512i dot = _mm512_setzero_si512();
#pragma GCC unroll 4
      for (int jj = 0; jj < 4; ++jj) dot = _mm512_dpbusd_epi32(dot, w[jj][k], bcast32(qs + 32 * k + 4 * jj));
      isum[r] = _mm512_add_epi32(isum[r], _mm512_mullo_epi32(dot, scales[k]));
    }
  }
}

struct Q6_Kx16 {
  static constexpr size_t kUnitBytes = kx16::kQ6_KUnitBytes;
  template <int R>
  static void unit_step(const uint8_t* unit, const uint8_t* const (&a)[R], __m512 (&acc)[R]) {
    __m512i isum[R];
    for (int r = 0; r < R; ++r) isum[r] = _mm512_setzero_si512();
    for (int h = 0; h < 2; ++h) {
      __m512i pairs[4];  // scales of groups 8h + 2k, 8h + 2k + 1 as int16 pairs
#pragma GCC unroll 4
      for (int k = 0; k < 4; ++k) {
        const uint8_t* p = unit + kx16::kQ6_KScales + 32 * static_cast<size_t>(4 * h + k);
        pairs[k] = _mm512_cvtepi8_epi16(_mm256_load_si256(reinterpret_cast<const __m256i*>(p)));
        const __m512i offset = _mm512_sub_epi16(_mm512_setzero_si512(), _mm512_slli_epi16(pairs[k], 5));
        for (int r = 0; r < R; ++r) {
          const uint8_t* bsums = a[r] + kActBsums + 4 * static_cast<size_t>(4 * h + k);
          isum[r] = _mm512_dpwssd_epi32(isum[r], offset, bcast32(bsums));
        }
      }
      for (int q = 0; q < 2; ++q) q6_k_pass<R>(unit, h, q, pairs, a, isum);
    }
    const __m512 d = load_ph16(unit + kx16::kQ6_KD);
    for (int r = 0; r < R; ++r) {
      const __m512 da = _mm512_set1_ps(load_f32(a[r]));
      acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[r]), _mm512_mul_ps(d, da), acc[r]);
    }
  }

  // Inputs 128h + 32k + 16q .. +15 (k < 4): groups 8h + 2k + q.
  template <int R>
  [[gnu::always_inline]] static void q6_k_pass(const uint8_t* unit, int h, int q, const __m512i (&pairs)[4],
                                               const uint8_t* const (&a)[R], __m512i (&isum)[R]) {
    __m512i w[4][4];
    q6_k_decode(unit, h, q, w);
    __m512i scales[4];
    for (int k = 0; k < 4; ++k) scales[k] = pair_scale(pairs[k], q);
    scaled_group_dots<R>(w, scales, a, 128 * static_cast<size_t>(h) + 16 * static_cast<size_t>(q), isum);
  }
};

struct Q3_Kx16 {
  static constexpr size_t kUnitBytes = kx16::kQ3_KUnitBytes;
  template <int R>
  static void unit_step(const uint8_t* unit, const uint8_t* const (&a)[R], __m512 (&acc)[R]) {
    __m512i isum[R];
    for (int r = 0; r < R; ++r) isum[r] = _mm512_setzero_si512();
#pragma GCC unroll 2
    for (int n = 0; n < 2; ++n) {
#pragma GCC unroll 2
      for (int q = 0; q < 2; ++q) q3_k_pass<R>(unit, n, q, a, isum);
    }
    const __m512 d = load_ph16(unit + kx16::kQ3_KD);
    for (int r = 0; r < R; ++r) {
      const __m512 da = _mm512_set1_ps(load_f32(a[r]));
      acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[r]), _mm512_mul_ps(d, da), acc[r]);
    }
  }

  // Inputs 128n + 32j + 16q .. +15 (j < 4): groups 8n + 2j + q, with the
  // offset of 4 of groups 8n .. 8n + 7 on the first pass (q = 0). The
  // scales are read after the codes, so a unit is read front to back (this,
  // with the passes unrolled, measured 97-114 tok/s at batch 1 on the medium
  // Q3_K llama against 71-79 with each half's scales read first).
  template <int R>
  [[gnu::always_inline]] static void q3_k_pass(const uint8_t* unit, int n, int q, const uint8_t* const (&a)[R],
                                               __m512i (&isum)[R]) {
    __m512i w[4][4];
    q3_k_decode(unit, n, q, w);
    __m512i scales[4];
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      // Scales of groups 8n + 2j, 8n + 2j + 1 as int16 pairs.
      const uint8_t* p = unit + kx16::kQ3_KScales + 32 * static_cast<size_t>(4 * n + j);
      const __m512i pairs = _mm512_cvtepi8_epi16(_mm256_load_si256(reinterpret_cast<const __m256i*>(p)));
      scales[j] = pair_scale(pairs, q);
      if (q != 0) continue;
      const __m512i offset = _mm512_sub_epi16(_mm512_setzero_si512(), _mm512_slli_epi16(pairs, 2));
      for (int r = 0; r < R; ++r) {
        const uint8_t* bsums = a[r] + kActBsums + 4 * static_cast<size_t>(4 * n + j);
        isum[r] = _mm512_dpwssd_epi32(isum[r], offset, bcast32(bsums));
      }
    }
    scaled_group_dots<R>(w, scales, a, 128 * static_cast<size_t>(n) + 16 * static_cast<size_t>(q), isum);
  }
};

struct Q2_Kx16 {
  static constexpr size_t kUnitBytes = kx16::kQ2_KUnitBytes;
  template <int R>
  static void unit_step(const uint8_t* unit, const uint8_t* const (&a)[R], __m512 (&acc)[R]) {
    __m512i isum[R], msum[R];
    for (int r = 0; r < R; ++r) isum[r] = msum[r] = _mm512_setzero_si512();
#pragma GCC unroll 2
    for (int n = 0; n < 2; ++n) {
#pragma GCC unroll 2
      for (int q = 0; q < 2; ++q) q2_k_pass<R>(unit, n, q, a, isum, msum);
    }
    const __m512 d = load_ph16(unit + kx16::kQ2_KD), dmin = load_ph16(unit + kx16::kQ2_KDmin);
    for (int r = 0; r < R; ++r) {
      const __m512 da = _mm512_set1_ps(load_f32(a[r]));
      acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[r]), _mm512_mul_ps(d, da), acc[r]);
      acc[r] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(msum[r]), _mm512_mul_ps(dmin, da), acc[r]);
    }
  }

  // Inputs 128n + 32j + 16q .. +15 (j < 4): groups 8n + 2j + q, with the
  // mins of groups 8n .. 8n + 7 against the per-16 sums on the first pass.
  template <int R>
  [[gnu::always_inline]] static void q2_k_pass(const uint8_t* unit, int n, int q, const uint8_t* const (&a)[R],
                                               __m512i (&isum)[R], __m512i (&msum)[R]) {
    __m512i w[4][4];
    q2_k_decode(unit, n, q, w);
    __m512i scales[4];
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      const __m512i bytes = q2_k_pairs(unit, n, j);
      scales[j] = pair_scale(_mm512_and_si512(bytes, _mm512_set1_epi16(0x0F)), q);
      if (q != 0) continue;
      const __m512i mins = _mm512_srli_epi16(bytes, 4);
      for (int r = 0; r < R; ++r) {
        const uint8_t* bsums = a[r] + kActBsums + 4 * static_cast<size_t>(4 * n + j);
        msum[r] = _mm512_dpwssd_epi32(msum[r], mins, bcast32(bsums));
      }
    }
    scaled_group_dots<R>(w, scales, a, 128 * static_cast<size_t>(n) + 16 * static_cast<size_t>(q), isum);
  }
};

struct Iq4XsX16 {
  static constexpr size_t kUnitBytes = kx16::kIq4XsUnitBytes;
  template <int R>
  static void unit_step(const uint8_t* unit, const uint8_t* const (&a)[R], __m512 (&acc)[R]) {
    __m512i isum[R];
    for (int r = 0; r < R; ++r) isum[r] = _mm512_setzero_si512();
#pragma GCC unroll 2
    for (int g = 0; g < 8; ++g) iq4_xs_group<R>(unit, g, a, isum);
    const __m512 d = load_ph16(unit + kx16::kIq4XsD);
    for (int r = 0; r < R; ++r) {
      const __m512 da = _mm512_set1_ps(load_f32(a[r]));
      acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[r]), _mm512_mul_ps(d, da), acc[r]);
    }
  }

  // isum += group g's dots (inputs 32g .. 32g + 31) times its scales.
  template <int R>
  [[gnu::always_inline]] static void iq4_xs_group(const uint8_t* unit, int g, const uint8_t* const (&a)[R],
                                                  __m512i (&isum)[R]) {
    __m512i lo[4], hi[4];
    iq4_xs_decode(unit, g, lo, hi);
    const __m512i scale = iq4_xs_scale(unit, g);
    const __m512i pairs = iq4_xs_offset_pairs(scale);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const uint8_t* qs = a[r] + kActQs + 32 * static_cast<size_t>(g);
      __m512i dot_lo = _mm512_setzero_si512(), dot_hi = _mm512_setzero_si512();
#pragma GCC unroll 4
      for (int i = 0; i < 4; ++i) {
        dot_lo = _mm512_dpbusd_epi32(dot_lo, lo[i], bcast32(qs + 4 * i));
        dot_hi = _mm512_dpbusd_epi32(dot_hi, hi[i], bcast32(qs + 16 + 4 * i));
      }
      isum[r] = _mm512_add_epi32(isum[r], _mm512_mullo_epi32(_mm512_add_epi32(dot_lo, dot_hi), scale));
      const uint8_t* bsums = a[r] + kActBsums + 4 * static_cast<size_t>(g);  // sums 2g, 2g + 1
      isum[r] = _mm512_dpwssd_epi32(isum[r], pairs, bcast32(bsums));
    }
  }
};

// y rows [i0, i0 + R), outputs n0 .. n0 + 15 where `mask` is set, from the
// group at `group`.
template <class L, int R>
void kx16_tile(const MatmulTask& t, int64_t i0, const uint8_t* group, int64_t n0, __mmask16 mask) {
  const int64_t num_blocks = t.cols / kQkK;
  const uint8_t* a[R];
  for (int r = 0; r < R; ++r) a[r] = t.act + static_cast<size_t>(i0 + r) * t.act_row_bytes;
  __m512 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
  const NextGroupShare share = next_group_share((t.m + kTileRows - 1) / kTileRows, i0 / kTileRows, group,
                                                t.weight_row_bytes, n0 + kx16::kRows < t.n_end);
  const uint8_t* unit = group;
  for (int64_t b = 0; b < num_blocks; ++b, unit += L::kUnitBytes) {
    prefetch_share(share, b, static_cast<size_t>(unit - group), L::kUnitBytes);
    if (i0 == 0) prefetch_ahead(unit, L::kUnitBytes);
    L::template unit_step<R>(unit, a, acc);
    for (int r = 0; r < R; ++r) a[r] += sizeof(BlockQ8_K);
  }
  for (int r = 0; r < R; ++r) _mm512_mask_storeu_ps(t.y + (i0 + r) * t.y_stride + n0, mask, acc[r]);
}

using Kx16TileFn = void (*)(const MatmulTask&, int64_t, const uint8_t*, int64_t, __mmask16);

template <class L>
constexpr Kx16TileFn kKx16Tiles[kTileRows] = {kx16_tile<L, 1>, kx16_tile<L, 2>, kx16_tile<L, 3>,
                                              kx16_tile<L, 4>};

// Every group overlapping [n_begin, n_end), front to back; per group, row
// tiles of up to kTileRows activation rows.
template <class L>
void run_kx16_groups(const MatmulTask& t) {
  for (int64_t g = t.n_begin / kx16::kRows; g * kx16::kRows < t.n_end; ++g) {
    const int64_t n0 = g * kx16::kRows;
    // (No std::min/max: an inline template instantiated here would be built
    // for AVX-512 and could be the copy the linker keeps for baseline code.)
    const int64_t lo = t.n_begin > n0 ? t.n_begin - n0 : 0;
    const int64_t hi = t.n_end < n0 + kx16::kRows ? t.n_end - n0 : kx16::kRows;
    const auto mask = static_cast<__mmask16>(((1u << hi) - 1) & ~((1u << lo) - 1));
    const uint8_t* group = t.weights + static_cast<size_t>(g) * t.weight_row_bytes;
    for (int64_t i0 = 0; i0 < t.m; i0 += kTileRows) {
      const int64_t rows = t.m - i0 < kTileRows ? t.m - i0 : kTileRows;
      kKx16Tiles<L>[rows - 1](t, i0, group, n0, mask);
    }
  }
}

}  // namespace

void matmul_q4_kx16(const MatmulTask& t) { run_kx16_groups<ScaleMinX16<kx16::Q4_KFields>>(t); }

void matmul_q5_kx16(const MatmulTask& t) { run_kx16_groups<ScaleMinX16<kx16::Q5_KFields>>(t); }

void matmul_q6_kx16(const MatmulTask& t) { run_kx16_groups<Q6_Kx16>(t); }

void matmul_iq4_xsx16(const MatmulTask& t) { run_kx16_groups<Iq4XsX16>(t); }

void matmul_q3_kx16(const MatmulTask& t) { run_kx16_groups<Q3_Kx16>(t); }

void matmul_q2_kx16(const MatmulTask& t) { run_kx16_groups<Q2_Kx16>(t); }

}  // namespace met::cpu::avx512
