// AVX2 matmul for the packed K-quant layouts WeightLayout::kQ4_Kx16,
// kQ5_Kx16, kQ6_Kx16, kIq4XsX16, kQ3_Kx16 and kQ2_Kx16 (packed_weights.h) against Q8_K activations: the
// layouts matmul_kx16_avx512.cc reads, run as two halves of 8 rows. Each
// aligned 64-byte line of a unit holds 4 bytes of each of the 16 rows of a
// group, so its 32-byte half (rows 8h .. 8h + 7) is, after a mask or shift,
// the unsigned operand of vpmaddubsw against 4 activation codes broadcast;
// vpmaddwd against ones then gives one int32 lane per row.
//   Q4_Kx16 / Q5_Kx16: per chunk of 64 inputs and line j, the low nibbles
//     (sub-block 2c) and high nibbles (2c + 1), Q5_K's fifth bit merged in
//     from its qh line; the int16 pairs of four lines are summed before
//     widening (at most 4 x 2 x 31 x 127 = 31496), each sub-block's dot
//     times its 8 rows' scales (vpmulld, exact), the mins as vpmaddwd of
//     (m, m) pairs against the activation's per-16 sums.
//   Q6_Kx16: per line of the two ql lines and the qh line, the 6-bit codes
//     (ql nibble and two qh bits) of four groups of 16 inputs; the int16
//     pairs of two lines are summed before widening (2 x 2 x 63 x 127 =
//     32004), each group's dot times its scale, and the offset of 32 as
//     vpmaddwd of the scale pairs times -32 against the per-16 sums.
//   Iq4XsX16: per group of 32 inputs and line, the low and high nibbles
//     through one vpshufb of kIq4Values (signed); vpmaddubsw of their
//     magnitudes against the activation's codes with their signs (at most
//     2 x 127 x 127 a pair), then vpmaddwd against the group's scale (ls -
//     32) in both halves of each lane: scaled int32 dots, no offset.
//   Q3_Kx16: per line of qs and its hmask line, the 3-bit codes of four
//     groups of 16 inputs; the int16 pairs of a group's four lines are
//     summed (at most 4 x 2 x 7 x 127 = 7112) and widened by vpmaddwd
//     against the group's scale in both halves of each lane, the offset of 4
//     as vpmaddwd of the scale pairs times -4 against the per-16 sums.
//   Q2_Kx16: as Q3_Kx16 from the qs lines alone (2-bit codes), the scale
//     and min nibbles of the group bytes as int16 pairs; the mins as
//     vpmaddwd against the per-16 sums, d_a d * I - d_a dmin * M.
// One float step per super-block, as the reference: d_a d * I (- d_a dmin *
// M). One activation row walks each group once, both halves together, with
// a prefetch two units ahead (kx16_one_row). More rows go in tiles of up to
// 4 activation rows x one half group, so at m <= 4 every
// weight byte is read from memory once for all rows; with more tiles each
// walk prefetches a share of the next group (next_group_prefetch.h). Outputs
// outside [n_begin, n_end) are masked off at the store. A row's arithmetic
// is the same whatever tile it lands in: bit-identical alone or in a batch.
// Built with -march=x86-64-v3: includes only intrinsics and declarations.
// Threading: pure functions. Tested by tests/backend/packed_weights_test.cc.
#include <immintrin.h>

#include <cstring>

#include "backend/cpu/kernels/kx16_walk_avx2.h"
#include "tensor/block_types.h"

namespace met::cpu::avx2 {
namespace {

// Lines 8c + j0 .. 8c + j0 + 3 of half h: the int32 dots of sub-blocks 2c
// (low nibbles) and 2c + 1 (high) for each activation row, added to lo, hi.
// Q5_K's fifth bit of element 64c + l is bit 2c of qh[l] (2c + 1 for 64c +
// 32 + l): qh shifted right by 2c, then its bits 0 and 1 to bit 4.
template <class F, int R>
[[gnu::always_inline]] inline void scale_min_lines(const uint8_t* unit, int h, int c, int j0,
                                                   const uint8_t* const (&a)[R], __m256i (&lo)[R],
                                                   __m256i (&hi)[R]) {
  const __m256i low_mask = _mm256_set1_epi8(0x0F);
  __m256i lo16[R], hi16[R];
  for (int r = 0; r < R; ++r) lo16[r] = hi16[r] = _mm256_setzero_si256();
#pragma GCC unroll 4
  for (int j = j0; j < j0 + 4; ++j) {
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
      lo16[r] = _mm256_add_epi16(lo16[r], _mm256_maddubs_epi16(wl, bcast32(qs)));
      hi16[r] = _mm256_add_epi16(hi16[r], _mm256_maddubs_epi16(wh, bcast32(qs + 32)));
    }
  }
  const __m256i ones = _mm256_set1_epi16(1);
  for (int r = 0; r < R; ++r) {
    lo[r] = _mm256_add_epi32(lo[r], _mm256_madd_epi16(lo16[r], ones));
    hi[r] = _mm256_add_epi32(hi[r], _mm256_madd_epi16(hi16[r], ones));
  }
}



// The operands of line jj of half h of groups (n, q, j), j < 4, of a
// Q3_Kx16 unit: inputs 128n + 32j + 16q + 4jj .. +3, 3-bit codes (the qs
// bits 2j, 2j + 1 and hmask bit 4n + j as bit 2).
[[gnu::always_inline]] inline void q3_k_operands(const uint8_t* unit, int h, int n, int q, int jj, __m256i (&w)[4]) {
  const __m256i low2 = _mm256_set1_epi8(0x03), bit2 = _mm256_set1_epi8(0x04);
  const size_t line = static_cast<size_t>(4 * q + jj);
  const __m256i v = load_half(unit + kx16::kQ3_KQs + kx16::kLine * (8 * static_cast<size_t>(n) + line), h);
  const __m256i hm = load_half(unit + kx16::kQ3_KHmask + kx16::kLine * line, h);
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    const int bit = 4 * n + j;
    const __m256i high = bit >= 2 ? _mm256_srl_epi16(hm, _mm_cvtsi32_si128(bit - 2))
                                  : _mm256_sll_epi16(hm, _mm_cvtsi32_si128(2 - bit));
    w[j] = _mm256_or_si256(_mm256_and_si256(_mm256_srl_epi16(v, _mm_cvtsi32_si128(2 * j)), low2),
                           _mm256_and_si256(high, bit2));
  }
}

// isum += the dots of groups 8n + 2j + q, j < 4 (inputs 128n + 32j + 16q
// .. +15) times their scales (`pairs`: groups 8n + 2j, 8n + 2j + 1 as int16
// pairs), per activation row, from the 2- or 3-bit codes kOperands gives
// (Q2_Kx16's, Q3_Kx16's): the int16 pairs of a group's four lines are summed
// (at most 4 x 2 x 7 x 127 = 7112) and widened by vpmaddwd against the
// group's scale in both halves of each lane.
using SmallCodeOperands = void (*)(const uint8_t*, int, int, int, int, __m256i (&)[4]);
template <SmallCodeOperands kOperands, int R>
[[gnu::always_inline]] inline void small_code_groups(const uint8_t* unit, int h, int n, int q,
                                                     const __m256i (&pairs)[4], const uint8_t* const (&a)[R],
                                                     __m256i (&isum)[R]) {
  __m256i dot16[R][4];
  for (int r = 0; r < R; ++r) {
    for (int j = 0; j < 4; ++j) dot16[r][j] = _mm256_setzero_si256();
  }
  for (int jj = 0; jj < 4; ++jj) {
    __m256i w[4];
    kOperands(unit, h, n, q, jj, w);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const uint8_t* qs = a[r] + kActQs + 128 * static_cast<size_t>(n) + 16 * static_cast<size_t>(q) +
                          4 * static_cast<size_t>(jj);
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) {
        dot16[r][j] = _mm256_add_epi16(dot16[r][j], _mm256_maddubs_epi16(w[j], bcast32(qs + 32 * j)));
      }
    }
  }
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    // The group's scale in both int16 halves of each lane.
    const __m256i scale = q == 0 ? _mm256_or_si256(_mm256_and_si256(pairs[j], _mm256_set1_epi32(0xFFFF)),
                                                    _mm256_slli_epi32(pairs[j], 16))
                                 : _mm256_or_si256(_mm256_srli_epi32(pairs[j], 16),
                                                   _mm256_andnot_si256(_mm256_set1_epi32(0xFFFF), pairs[j]));
    for (int r = 0; r < R; ++r) isum[r] = _mm256_add_epi32(isum[r], _mm256_madd_epi16(dot16[r][j], scale));
  }
}

struct Q3_Kx16 {
  static constexpr size_t kUnitBytes = kx16::kQ3_KUnitBytes;
  template <int R>
  static void unit_step(const uint8_t* unit, int h, const uint8_t* const (&a)[R], __m256 (&acc)[R]) {
    __m256i isum[R];
    for (int r = 0; r < R; ++r) isum[r] = _mm256_setzero_si256();
    for (int n = 0; n < 2; ++n) {
      __m256i pairs[4];  // scales of groups 8n + 2j (q = 0) and 8n + 2j + 1 (q = 1) as int16 pairs
      offset_pairs<2, R>(unit + kx16::kQ3_KScales, h, n, a, pairs, isum);
      for (int q = 0; q < 2; ++q) small_code_groups<q3_k_operands, R>(unit, h, n, q, pairs, a, isum);
    }
    const __m256 d = half_ph8(unit + kx16::kQ3_KD, h);
    for (int r = 0; r < R; ++r) {
      const __m256 da = _mm256_set1_ps(load_f32(a[r]));
      acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[r]), _mm256_mul_ps(d, da), acc[r]);
    }
  }
};

// The operands of line jj of half h of groups (n, q, j), j < 4, of a
// Q2_Kx16 unit: inputs 128n + 32j + 16q + 4jj .. +3, 2-bit codes (qs bits
// 2j, 2j + 1).
[[gnu::always_inline]] inline void q2_k_operands(const uint8_t* unit, int h, int n, int q, int jj, __m256i (&w)[4]) {
  const __m256i low2 = _mm256_set1_epi8(0x03);
  const size_t line = static_cast<size_t>(4 * q + jj);
  const __m256i v = load_half(unit + kx16::kQ2_KQs + kx16::kLine * (8 * static_cast<size_t>(n) + line), h);
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) w[j] = _mm256_and_si256(_mm256_srl_epi16(v, _mm_cvtsi32_si128(2 * j)), low2);
}

struct Q2_Kx16 {
  static constexpr size_t kUnitBytes = kx16::kQ2_KUnitBytes;
  template <int R>
  static void unit_step(const uint8_t* unit, int h, const uint8_t* const (&a)[R], __m256 (&acc)[R]) {
    __m256i isum[R], msum[R];
    for (int r = 0; r < R; ++r) isum[r] = msum[r] = _mm256_setzero_si256();
    for (int n = 0; n < 2; ++n) {
      __m256i scales[4];  // of groups 8n + 2j (q = 0) and 8n + 2j + 1 (q = 1) as int16 pairs
      for (int j = 0; j < 4; ++j) {
        const uint8_t* p = unit + kx16::kQ2_KScales + 32 * static_cast<size_t>(4 * n + j) + 16 * h;
        const __m256i bytes = _mm256_cvtepu8_epi16(_mm_load_si128(reinterpret_cast<const __m128i*>(p)));
        scales[j] = _mm256_and_si256(bytes, _mm256_set1_epi16(0x0F));
        const __m256i mins = _mm256_srli_epi16(bytes, 4);
        for (int r = 0; r < R; ++r) {
          const uint8_t* bsums = a[r] + kActBsums + 4 * static_cast<size_t>(4 * n + j);
          msum[r] = _mm256_add_epi32(msum[r], _mm256_madd_epi16(mins, bcast32(bsums)));
        }
      }
      for (int q = 0; q < 2; ++q) small_code_groups<q2_k_operands, R>(unit, h, n, q, scales, a, isum);
    }
    const __m256 d = half_ph8(unit + kx16::kQ2_KD, h), dmin = half_ph8(unit + kx16::kQ2_KDmin, h);
    for (int r = 0; r < R; ++r) {
      const __m256 da = _mm256_set1_ps(load_f32(a[r]));
      acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[r]), _mm256_mul_ps(d, da), acc[r]);
      acc[r] = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(msum[r]), _mm256_mul_ps(dmin, da), acc[r]);
    }
  }
};


// This tier's integer kernels for kx16_walk_avx2.h's super-block steps.
struct Avx2Dots {
  // lo, hi = the int32 dots of sub-blocks 2c (low nibbles) and 2c + 1
  // (high) of each activation row, from the chunk's 8 lines.
  template <class F, int R>
  [[gnu::always_inline]] static void scale_min_chunk(const uint8_t* unit, int h, int c, const uint8_t* const (&a)[R],
                                                     __m256i (&lo)[R], __m256i (&hi)[R]) {
    for (int r = 0; r < R; ++r) lo[r] = hi[r] = _mm256_setzero_si256();
    scale_min_lines<F, R>(unit, h, c, 0, a, lo, hi);
    scale_min_lines<F, R>(unit, h, c, 4, a, lo, hi);
  }

  // isum += the dots of groups 8hs + 2k + q, k < 4 (inputs 128hs + 32k + 16q
  // .. +15) times their scales, per activation row; each line's operands
  // are decoded once for all four groups.
  template <int R>
  [[gnu::always_inline]] static void q6_k_groups(const uint8_t* unit, int h, int hs, int q,
                                                 const __m256i (&pairs)[4], const uint8_t* const (&a)[R],
                                                 __m256i (&isum)[R]) {
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i dot[R][4];
    for (int r = 0; r < R; ++r) {
      for (int k = 0; k < 4; ++k) dot[r][k] = _mm256_setzero_si256();
    }
    for (int j0 = 0; j0 < 4; j0 += 2) {
      __m256i w0[4], w1[4];
      q6_k_operands(unit, h, hs, q, j0, w0);
      q6_k_operands(unit, h, hs, q, j0 + 1, w1);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        const uint8_t* qs = a[r] + kActQs + 128 * static_cast<size_t>(hs) + 16 * static_cast<size_t>(q) +
                            4 * static_cast<size_t>(j0);
#pragma GCC unroll 4
        for (int k = 0; k < 4; ++k) {
          const __m256i pair16 = _mm256_add_epi16(_mm256_maddubs_epi16(w0[k], bcast32(qs + 32 * k)),
                                                  _mm256_maddubs_epi16(w1[k], bcast32(qs + 32 * k + 4)));
          dot[r][k] = _mm256_add_epi32(dot[r][k], _mm256_madd_epi16(pair16, ones));
        }
      }
    }
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      const __m256i scale = q == 0 ? _mm256_srai_epi32(_mm256_slli_epi32(pairs[k], 16), 16)
                                   : _mm256_srai_epi32(pairs[k], 16);
      for (int r = 0; r < R; ++r) isum[r] = _mm256_add_epi32(isum[r], _mm256_mullo_epi32(dot[r][k], scale));
    }
  }

  // isum += half h's dots of group g (inputs 32g .. 32g + 31) times its scales.
  template <int R>
  [[gnu::always_inline]] static void iq4_xs_group(const uint8_t* unit, int h, int g, const uint8_t* const (&a)[R],
                                                  __m256i (&isum)[R]) {
    const __m256i table = _mm256_broadcastsi128_si256(
        _mm_setr_epi8(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113));
    const __m256i low_mask = _mm256_set1_epi8(0x0F);
    // ls - 32 in both int16 halves of each row's lane.
    const __m256i scale = _mm256_cvtepi8_epi32(
        _mm_loadl_epi64(reinterpret_cast<const __m128i*>(unit + kx16::kIq4XsScales + 16 * g + kHalfGroupRows * h)));
    const __m256i pairs = _mm256_or_si256(_mm256_and_si256(scale, _mm256_set1_epi32(0xFFFF)),
                                          _mm256_slli_epi32(scale, 16));
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
      const __m256i v = load_half(unit + kx16::kIq4XsCodes + kx16::kLine * static_cast<size_t>(4 * g + i), h);
      const __m256i wl = _mm256_shuffle_epi8(table, _mm256_and_si256(v, low_mask));
      const __m256i wh = _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(v, 4), low_mask));
      const __m256i ml = _mm256_sign_epi8(wl, wl), mh = _mm256_sign_epi8(wh, wh);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        const uint8_t* qs = a[r] + kActQs + 32 * static_cast<size_t>(g) + 4 * static_cast<size_t>(i);
        const __m256i pl = _mm256_maddubs_epi16(ml, _mm256_sign_epi8(bcast32(qs), wl));
        const __m256i ph = _mm256_maddubs_epi16(mh, _mm256_sign_epi8(bcast32(qs + 16), wh));
        isum[r] = _mm256_add_epi32(isum[r], _mm256_add_epi32(_mm256_madd_epi16(pl, pairs),
                                                             _mm256_madd_epi16(ph, pairs)));
      }
    }
  }
};

}  // namespace

void matmul_q4_kx16(const MatmulTask& t) { run_kx16_halves<ScaleMinX16<kx16::Q4_KFields, Avx2Dots>>(t); }

void matmul_q5_kx16(const MatmulTask& t) { run_kx16_halves<ScaleMinX16<kx16::Q5_KFields, Avx2Dots>>(t); }

void matmul_q6_kx16(const MatmulTask& t) { run_kx16_halves<Q6_Kx16<Avx2Dots>>(t); }

void matmul_iq4_xsx16(const MatmulTask& t) { run_kx16_halves<Iq4XsX16<Avx2Dots>>(t); }

void matmul_q3_kx16(const MatmulTask& t) { run_kx16_halves<Q3_Kx16>(t); }

void matmul_q2_kx16(const MatmulTask& t) { run_kx16_halves<Q2_Kx16>(t); }

}  // namespace met::cpu::avx2
