// AVX-VNNI matmul for the packed K-quant layouts WeightLayout::kQ4_Kx16,
// kQ5_Kx16, kQ6_Kx16 and kIq4XsX16 (packed_weights.h) against Q8_K
// activations: the layouts and half-group walk of matmul_kx16_avx2.cc
// (kx16_walk_avx2.h), with each line's codes (unsigned, 0 .. 15, 31 or 63)
// against 4 activation codes broadcast in one vpdpbusd on ymm, straight into
// an int32 lane per row, where AVX2 needs vpmaddubsw, an int16 add and
// vpmaddwd. This is the tier of Intel's client cores since Alder Lake, which
// have VNNI on ymm and no AVX-512.
//   Q4_Kx16 / Q5_Kx16: per chunk of 64 inputs, the low nibbles (sub-block 2c)
//     and the high nibbles (2c + 1) of its 8 lines, Q5_K's fifth bit merged in
//     from its qh line; each sub-block's dot times its 8 rows' scales
//     (vpmulld, exact), the mins as vpmaddwd of (m, m) pairs against the
//     activation's per-16 sums.
//   Q6_Kx16: group by group of 16 inputs, each line's 6-bit codes from its
//     ql nibble and two qh bits, the group's dot times its scale, and the
//     offset of 32 as vpmaddwd of the scale pairs times -32 against the
//     per-16 sums.
//   Iq4XsX16: per group of 32 inputs and line, the low and high nibbles
//     through one vpshufb of kIq4Values + 128; the chain starts at -128 x the
//     group's activation sum, and the dot times the group's ls - 32.
// One float step per super-block, as the reference: d_a d * I (- d_a dmin *
// M). The sums are exact integers as in the AVX2 kernels, so both tiers give
// the same outputs. Tiles as matmul_kx16_avx2.cc's; a row's arithmetic is the
// same whatever tile it lands in: bit-identical alone or in a batch.
// Built with -march=x86-64-v3 -mavxvnni: includes only intrinsics and
// declarations (and kx16_walk_avx2.h's always-inlined helpers).
// Threading: pure functions. Tested by tests/backend/packed_weights_test.cc.
#include <immintrin.h>

#include "backend/cpu/kernels/kx16_walk_avx2.h"
#include "backend/cpu/kernels/matmul_kernels.h"

namespace met::cpu::avxvnni {
namespace {

using avx2::bcast32;
using avx2::half_ph8;
using avx2::kActBsums;
using avx2::kActQs;
using avx2::load_f32;
using avx2::load_half;
using avx2::widen8;

// Lines 8c .. 8c + 7 of half h: the int32 dots of sub-blocks 2c (low
// nibbles) and 2c + 1 (high) for each activation row, into lo, hi. Q5_K's
// fifth bit of element 64c + l is bit 2c of qh[l] (2c + 1 for 64c + 32 + l).
template <class F, int R>
[[gnu::always_inline]] inline void scale_min_chunk_lines(const uint8_t* unit, int h, int c,
                                                         const uint8_t* const (&a)[R], __m256i (&lo)[R],
                                                         __m256i (&hi)[R]) {
  const __m256i low_mask = _mm256_set1_epi8(0x0F);
  for (int r = 0; r < R; ++r) lo[r] = hi[r] = _mm256_setzero_si256();
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) {
    const __m256i v = load_half(unit + F::kCodes + kx16::kLine * static_cast<size_t>(8 * c + j), h);
    __m256i wl = _mm256_and_si256(v, low_mask);
    __m256i wh = _mm256_and_si256(_mm256_srli_epi16(v, 4), low_mask);
    if constexpr (F::kQh != 0) {  // Q5_K
      const __m256i bit4 = _mm256_set1_epi8(0x10);
      const __m256i qh = _mm256_srl_epi16(load_half(unit + F::kQh + kx16::kLine * static_cast<size_t>(j), h),
                                          _mm_cvtsi32_si128(2 * c));
      wl = _mm256_or_si256(wl, _mm256_and_si256(_mm256_slli_epi16(qh, 4), bit4));
      wh = _mm256_or_si256(wh, _mm256_and_si256(_mm256_slli_epi16(qh, 3), bit4));
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const uint8_t* qs = a[r] + kActQs + 64 * static_cast<size_t>(c) + 4 * static_cast<size_t>(j);
      lo[r] = _mm256_dpbusd_avx_epi32(lo[r], wl, bcast32(qs));
      hi[r] = _mm256_dpbusd_avx_epi32(hi[r], wh, bcast32(qs + 32));
    }
  }
}




// This tier's integer kernels for kx16_walk_avx2.h's super-block steps.
struct VnniDots {
  template <class F, int R>
  [[gnu::always_inline]] static void scale_min_chunk(const uint8_t* unit, int h, int c, const uint8_t* const (&a)[R],
                                                     __m256i (&lo)[R], __m256i (&hi)[R]) {
    scale_min_chunk_lines<F, R>(unit, h, c, a, lo, hi);
  }

  // isum += the dots of groups 8hs + 2k + q, k < 4 (inputs 128hs + 32k + 16q
  // .. +15) times their scales, per activation row: group by group, so a
  // tile of 4 rows keeps its 4 dots and the operand in registers (decoding
  // each line's 4 operands at once held 16 dots and spilled).
  template <int R>
  [[gnu::always_inline]] static void q6_k_groups(const uint8_t* unit, int h, int hs, int q,
                                                 const __m256i (&pairs)[4], const uint8_t* const (&a)[R],
                                                 __m256i (&isum)[R]) {
    q6_k_group<0, R>(unit, h, hs, q, pairs, a, isum);
    q6_k_group<1, R>(unit, h, hs, q, pairs, a, isum);
    q6_k_group<2, R>(unit, h, hs, q, pairs, a, isum);
    q6_k_group<3, R>(unit, h, hs, q, pairs, a, isum);
  }

  // Group 8hs + 2k + q's part of q6_k_groups. Its operand of line jj: the
  // low (k = 0, 1) or high (k = 2, 3) nibbles of ql line 16hs + 8(k % 2) +
  // 4q + jj with bits 2k, 2k + 1 of qh line 8hs + 4q + jj as bits 4, 5.
  template <int k, int R>
  [[gnu::always_inline]] static void q6_k_group(const uint8_t* unit, int h, int hs, int q,
                                                const __m256i (&pairs)[4], const uint8_t* const (&a)[R],
                                                __m256i (&isum)[R]) {
    const __m256i low_mask = _mm256_set1_epi8(0x0F), high_mask = _mm256_set1_epi8(0x30);
    __m256i dot[R];
    for (int r = 0; r < R; ++r) dot[r] = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int jj = 0; jj < 4; ++jj) {
      const size_t line = static_cast<size_t>(4 * q + jj);
      const __m256i ql = load_half(
          unit + kx16::kQ6_KQl + kx16::kLine * (16 * static_cast<size_t>(hs) + 8 * (k % 2) + line), h);
      const __m256i qh = load_half(unit + kx16::kQ6_KQh + kx16::kLine * (8 * static_cast<size_t>(hs) + line), h);
      const __m256i low = _mm256_and_si256(k < 2 ? ql : _mm256_srli_epi16(ql, 4), low_mask);
      const __m256i high = 4 - 2 * k > 0   ? _mm256_slli_epi16(qh, 4 - 2 * k)
                           : 4 - 2 * k < 0 ? _mm256_srli_epi16(qh, 2 * k - 4)
                                           : qh;
      const __m256i w = _mm256_or_si256(low, _mm256_and_si256(high, high_mask));
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        const uint8_t* qs = a[r] + kActQs + 128 * static_cast<size_t>(hs) + 16 * static_cast<size_t>(q) +
                            4 * static_cast<size_t>(jj) + 32 * k;
        dot[r] = _mm256_dpbusd_avx_epi32(dot[r], w, bcast32(qs));
      }
    }
    const __m256i scale = q == 0 ? _mm256_srai_epi32(_mm256_slli_epi32(pairs[k], 16), 16)
                                 : _mm256_srai_epi32(pairs[k], 16);
    for (int r = 0; r < R; ++r) isum[r] = _mm256_add_epi32(isum[r], _mm256_mullo_epi32(dot[r], scale));
  }

  // isum += half h's dots of group g (inputs 32g .. 32g + 31) times its
  // scales: the nibbles through one vpshufb of kIq4Values + 128 (unsigned),
  // the dot's chain started at -128 x the group's activation sum (its two
  // per-16 sums), then times ls - 32 (vpmulld, exact).
  template <int R>
  [[gnu::always_inline]] static void iq4_xs_group(const uint8_t* unit, int h, int g, const uint8_t* const (&a)[R],
                                                  __m256i (&isum)[R]) {
    const __m256i table = _mm256_broadcastsi128_si256(_mm_setr_epi8(
        1, 24, 45, 63, 79, 93, 106, 118, static_cast<char>(129), static_cast<char>(141), static_cast<char>(153),
        static_cast<char>(166), static_cast<char>(181), static_cast<char>(197), static_cast<char>(217),
        static_cast<char>(241)));
    const __m256i low_mask = _mm256_set1_epi8(0x0F), minus_128 = _mm256_set1_epi16(-128);
    __m256i dot[R];
    for (int r = 0; r < R; ++r) {
      dot[r] = _mm256_madd_epi16(bcast32(a[r] + kActBsums + 4 * static_cast<size_t>(g)), minus_128);
    }
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
      const __m256i v = load_half(unit + kx16::kIq4XsCodes + kx16::kLine * static_cast<size_t>(4 * g + i), h);
      const __m256i wl = _mm256_shuffle_epi8(table, _mm256_and_si256(v, low_mask));
      const __m256i wh = _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(v, 4), low_mask));
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        const uint8_t* qs = a[r] + kActQs + 32 * static_cast<size_t>(g) + 4 * static_cast<size_t>(i);
        dot[r] = _mm256_dpbusd_avx_epi32(dot[r], wl, bcast32(qs));
        dot[r] = _mm256_dpbusd_avx_epi32(dot[r], wh, bcast32(qs + 16));
      }
    }
    // ls - 32 of each row.
    const __m256i scale = _mm256_cvtepi8_epi32(
        _mm_loadl_epi64(reinterpret_cast<const __m128i*>(unit + kx16::kIq4XsScales + 16 * g + 8 * h)));
    for (int r = 0; r < R; ++r) isum[r] = _mm256_add_epi32(isum[r], _mm256_mullo_epi32(dot[r], scale));
  }
};

using Q4_Kx16 = avx2::ScaleMinX16<kx16::Q4_KFields, VnniDots>;
using Q5_Kx16 = avx2::ScaleMinX16<kx16::Q5_KFields, VnniDots>;

}  // namespace

void matmul_q4_kx16(const MatmulTask& t) { avx2::run_kx16_halves<Q4_Kx16>(t); }

void matmul_q5_kx16(const MatmulTask& t) { avx2::run_kx16_halves<Q5_Kx16>(t); }

void matmul_q6_kx16(const MatmulTask& t) { avx2::run_kx16_halves<avx2::Q6_Kx16<VnniDots>>(t); }

void matmul_iq4_xsx16(const MatmulTask& t) { avx2::run_kx16_halves<avx2::Iq4XsX16<VnniDots>>(t); }

}  // namespace met::cpu::avxvnni
