// The block decoding the AVX-512 packed K-quant kernels share: the vector
// tile kernels (matmul_kx16_avx512.cc) and the AMX ones (matmul_kx16_amx.h).
// Each decoder gives the operands of a pass over a unit (packed_weights.h's
// K-quant layouts; offsets in kquant_x16_layout.h): registers whose 16
// int32 lanes are the group's 16 rows, 4 unsigned code bytes each, so one
// register is one vpdpbusd operand and 8 (or 4) of them one AMX B tile.
// Include only from translation units built with the AVX-512 flags.
// Threading: pure functions. Tested by tests/backend/packed_weights_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "backend/cpu/kernels/kquant_x16_layout.h"
#include "core/avx512_intrinsics.h"

namespace met::cpu::avx512 {

inline __m512i bcast32(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof(v));
  return _mm512_set1_epi32(v);
}

inline float load_f32(const uint8_t* p) {
  float v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

inline __m512 load_ph16(const uint8_t* p) {
  return _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(p)));
}

// The operands of line j of chunk c (inputs 64c .. 64c + 63) of a Q4_Kx16
// or Q5_Kx16 (F: kquant_x16_layout.h's fields) unit: lo elements 64c + 4j
// .. +3 (sub-block 2c), hi 64c + 32 + 4j .. (2c + 1), codes 0 .. 15 (31).
// Q5_K's fifth bit of element 64c + l is bit 2c of qh[l] (2c + 1 for
// 64c + 32 + l): qh shifted right by 2c, then its bits 0 and 1 to bit 4.
template <class F>
[[gnu::always_inline]] inline void scale_min_line(const uint8_t* unit, int c, int j, __m512i& lo, __m512i& hi) {
  const __m512i low_mask = _mm512_set1_epi8(0x0F);
  const __m512i v = _mm512_load_si512(unit + F::kCodes + kx16::kLine * static_cast<size_t>(8 * c + j));
  lo = _mm512_and_si512(v, low_mask);
  hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), low_mask);
  if constexpr (F::kQh != 0) {  // Q5_K
    constexpr int kOrAnd = 0xF8;  // a | (b & c)
    const __m512i bit4 = _mm512_set1_epi8(0x10);
    const __m512i qh = _mm512_srl_epi16(_mm512_load_si512(unit + F::kQh + kx16::kLine * static_cast<size_t>(j)),
                                        _mm_cvtsi32_si128(2 * c));
    lo = _mm512_ternarylogic_epi32(lo, _mm512_slli_epi16(qh, 4), bit4, kOrAnd);
    hi = _mm512_ternarylogic_epi32(hi, _mm512_slli_epi16(qh, 3), bit4, kOrAnd);
  }
}

// Every line of chunk c: lo[j], hi[j] as scale_min_line's.
template <class F>
[[gnu::always_inline]] inline void scale_min_decode(const uint8_t* unit, int c, __m512i (&lo)[8], __m512i (&hi)[8]) {
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) scale_min_line<F>(unit, c, j, lo[j], hi[j]);
}

// Sub-block s's 16 scale (or min) bytes of a Q4_Kx16 / Q5_Kx16 unit at
// `offset` (F::kScales, F::kMins), widened to int32 lanes.
inline __m512i scale_min_bytes(const uint8_t* unit, size_t offset, int s) {
  return _mm512_cvtepu8_epi32(
      _mm_load_si128(reinterpret_cast<const __m128i*>(unit + offset + 16 * static_cast<size_t>(s))));
}

// The mins of sub-blocks 2c and 2c + 1 of a Q4_Kx16 / Q5_Kx16 unit (at
// `offset`, F::kMins) as int16 pairs, one lane a row: the operand of one
// vpdpwssd against an activation's (S_2c, S_2c+1) (sum32_pairs).
inline __m512i min_pairs(const uint8_t* unit, size_t offset, int c) {
  const auto* p = reinterpret_cast<const __m128i*>(unit + offset + 32 * static_cast<size_t>(c));
  const __m128i even = _mm_load_si128(p), odd = _mm_load_si128(p + 1);
  return _mm512_cvtepu8_epi16(_mm256_set_m128i(_mm_unpackhi_epi8(even, odd), _mm_unpacklo_epi8(even, odd)));
}

// A Q8_K super-block's per-32 sums from its per-16 `bsums`: 32-bit lane c
// (c < 4) holds the int16 pair (S_2c, S_2c+1), S_s the sum of codes 32s ..
// 32s + 31 (at most 32 x 128 in size: it fits). Broadcast lane c with
// pair_lane.
inline __m512i sum32_pairs(const int16_t* bsums) {
  const __m256i sums = _mm256_madd_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(bsums)),
                                         _mm256_set1_epi16(1));
  return _mm512_castsi128_si512(_mm_packs_epi32(_mm256_castsi256_si128(sums), _mm256_extracti128_si256(sums, 1)));
}

[[gnu::always_inline]] inline __m512i pair_lane(__m512i pairs, int c) {
  return _mm512_permutexvar_epi32(_mm512_set1_epi32(c), pairs);
}

// The 16 operands of inputs 128h + 32k + 4(4q + jj) .. +3 (k, jj < 4) of a
// Q6_Kx16 unit: w[jj][k], 6-bit codes.
[[gnu::always_inline]] inline void q6_k_decode(const uint8_t* unit, int h, int q, __m512i (&w)[4][4]) {
  const __m512i low_mask = _mm512_set1_epi8(0x0F);
  const __m512i bits_0145 = _mm512_set1_epi8(0x33), bits_2367 = _mm512_set1_epi8(static_cast<char>(0xCC));
  // (a & 0x0F) | (b & 0xF0): vpternlogd with c = the low-nibble mask.
  constexpr int kSelect = 0xE4;
#pragma GCC unroll 4
  for (int jj = 0; jj < 4; ++jj) {
    const size_t line = static_cast<size_t>(4 * q + jj);
    const __m512i a = _mm512_load_si512(unit + kx16::kQ6_KQl + kx16::kLine * (16 * static_cast<size_t>(h) + line));
    const __m512i b =
        _mm512_load_si512(unit + kx16::kQ6_KQl + kx16::kLine * (16 * static_cast<size_t>(h) + 8 + line));
    const __m512i qh = _mm512_load_si512(unit + kx16::kQ6_KQh + kx16::kLine * (8 * static_cast<size_t>(h) + line));
    // Bits 2k, 2k + 1 of each qh byte to bits 4, 5, with zeros at 6, 7.
    const __m512i even = _mm512_and_si512(qh, bits_0145), odd = _mm512_and_si512(qh, bits_2367);
    w[jj][0] = _mm512_ternarylogic_epi32(a, _mm512_slli_epi16(even, 4), low_mask, kSelect);
    w[jj][1] = _mm512_ternarylogic_epi32(b, _mm512_slli_epi16(odd, 2), low_mask, kSelect);
    w[jj][2] = _mm512_ternarylogic_epi32(_mm512_srli_epi16(a, 4), even, low_mask, kSelect);
    w[jj][3] = _mm512_ternarylogic_epi32(_mm512_srli_epi16(b, 4), _mm512_srli_epi16(odd, 2), low_mask, kSelect);
  }
}

// Group scales (int32 lanes) from int16 pairs of groups 2p, 2p + 1: the
// even group's for q = 0, the odd one's for q = 1.
[[gnu::always_inline]] inline __m512i pair_scale(__m512i pairs, int q) {
  return q == 0 ? _mm512_srai_epi32(_mm512_slli_epi32(pairs, 16), 16) : _mm512_srai_epi32(pairs, 16);
}

// The operands of group g (inputs 32g .. 32g + 31) of an Iq4XsX16 unit:
// lo[i] elements 32g + 4i .. +3, hi[i] 32g + 16 + 4i .., each the value + 128
// (kIq4Values through one vpshufb).
[[gnu::always_inline]] inline void iq4_xs_decode(const uint8_t* unit, int g, __m512i (&lo)[4], __m512i (&hi)[4]) {
  // kIq4Values + 128 (block_types.h), in every 128-bit lane.
  const __m512i table = _mm512_broadcast_i32x4(
      _mm_setr_epi8(1, 24, 45, 63, 79, 93, 106, 118, static_cast<char>(129), static_cast<char>(141),
                    static_cast<char>(153), static_cast<char>(166), static_cast<char>(181), static_cast<char>(197),
                    static_cast<char>(217), static_cast<char>(241)));
  const __m512i low_mask = _mm512_set1_epi8(0x0F);
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    const __m512i v = _mm512_load_si512(unit + kx16::kIq4XsCodes + kx16::kLine * static_cast<size_t>(4 * g + i));
    lo[i] = _mm512_shuffle_epi8(table, _mm512_and_si512(v, low_mask));
    hi[i] = _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srli_epi16(v, 4), low_mask));
  }
}

// Group g's 16 scales (ls - 32) of an Iq4XsX16 unit as int32 lanes.
inline __m512i iq4_xs_scale(const uint8_t* unit, int g) {
  return _mm512_cvtepi8_epi32(
      _mm_load_si128(reinterpret_cast<const __m128i*>(unit + kx16::kIq4XsScales + 16 * static_cast<size_t>(g))));
}

// -128 (ls - 32) in both int16 halves of each lane (it fits: at most 4096):
// the +128 of the operands taken back out against the group's two per-16
// sums by one vpdpwssd.
inline __m512i iq4_xs_offset_pairs(__m512i scale) {
  const __m512i offset = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32(scale, 7));
  return _mm512_or_si512(_mm512_and_si512(offset, _mm512_set1_epi32(0xFFFF)), _mm512_slli_epi32(offset, 16));
}

// The 16 operands of inputs 128n + 32j + 16q + 4jj .. +3 (j, jj < 4) of a
// Q3_Kx16 unit: w[jj][j], 3-bit codes (the 2 bits of qs[32n + 16q + 4jj ..]
// at bit 2j, and bit 4n + j of hmask[16q + 4jj ..] as bit 2).
[[gnu::always_inline]] inline void q3_k_decode(const uint8_t* unit, int n, int q, __m512i (&w)[4][4]) {
  const __m512i low2 = _mm512_set1_epi8(0x03), bit2 = _mm512_set1_epi8(0x04);
  constexpr int kAndOr = 0xEC;  // (a & c) | b
#pragma GCC unroll 4
  for (int jj = 0; jj < 4; ++jj) {
    const size_t line = static_cast<size_t>(4 * q + jj);
    const __m512i v = _mm512_load_si512(unit + kx16::kQ3_KQs + kx16::kLine * (8 * static_cast<size_t>(n) + line));
    const __m512i hm = _mm512_load_si512(unit + kx16::kQ3_KHmask + kx16::kLine * line);
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      const int bit = 4 * n + j;  // of hmask, to bit 2 (no byte's bit crosses into another's bit 2)
      const __m512i high = bit >= 2 ? _mm512_srl_epi16(hm, _mm_cvtsi32_si128(bit - 2))
                                    : _mm512_sll_epi16(hm, _mm_cvtsi32_si128(2 - bit));
      const __m512i low = _mm512_srl_epi16(v, _mm_cvtsi32_si128(2 * j));
      w[jj][j] = _mm512_ternarylogic_epi32(low, _mm512_and_si512(high, bit2), low2, kAndOr);
    }
  }
}

// The 16 operands of inputs 128n + 32j + 16q + 4jj .. +3 (j, jj < 4) of a
// Q2_Kx16 unit: w[jj][j], 2-bit codes (bits 2j, 2j + 1 of qs[32n + 16q +
// 4jj ..], the same lines as Q3_K's qs).
[[gnu::always_inline]] inline void q2_k_decode(const uint8_t* unit, int n, int q, __m512i (&w)[4][4]) {
  const __m512i low2 = _mm512_set1_epi8(0x03);
#pragma GCC unroll 4
  for (int jj = 0; jj < 4; ++jj) {
    const size_t line = 8 * static_cast<size_t>(n) + static_cast<size_t>(4 * q + jj);
    const __m512i v = _mm512_load_si512(unit + kx16::kQ2_KQs + kx16::kLine * line);
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) w[jj][j] = _mm512_and_si512(_mm512_srl_epi16(v, _mm_cvtsi32_si128(2 * j)), low2);
  }
}

// The bytes (scale | min << 4) of groups 8n + 2j, 8n + 2j + 1 of a Q2_Kx16
// unit as int16 pairs: scales & 0x0F, mins >> 4 (each lane one row).
inline __m512i q2_k_pairs(const uint8_t* unit, int n, int j) {
  const uint8_t* p = unit + kx16::kQ2_KScales + 32 * static_cast<size_t>(4 * n + j);
  return _mm512_cvtepu8_epi16(_mm256_load_si256(reinterpret_cast<const __m256i*>(p)));
}

}  // namespace met::cpu::avx512
