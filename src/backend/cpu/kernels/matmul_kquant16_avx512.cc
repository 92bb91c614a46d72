// AVX-512 matmul kernels for the K-quants of 16-element groups, Q2_K, Q3_K
// and Q6_K, against Q8_K activations. A super-block is four 64-element
// vectors: vpmaddubsw of the unsigned weight codes (Q2_K 0..3, Q3_K 0..7 for
// values -4..3, Q6_K 0..63 for values -32..31) with the activation codes, then
// vpdpwssd against the group scales spread over int16 lanes (8 per group),
// exact in int32 lanes. One float step per super-block follows the
// reference's formula: d_a d_w * I - d_a dmin * M for Q2_K (M the
// activation's 16-element sums against the mins), d_a d_w * (I - o S) for
// Q3_K (o = 4) and Q6_K (o = 32), S the same sums against the scales.
// Tiles as kquant_tile_avx512.h lays them out.
// Threading: pure functions. Tested by tests/backend/matmul_test.cc.
#include "backend/cpu/kernels/kquant_tile_avx512.h"

namespace met::cpu::avx512 {
namespace {

// Int16 lanes: `low` in the lower 256 bits, `high` in the upper.
__m512i per_half16(int low, int high) {
  return _mm512_inserti64x4(_mm512_set1_epi16(static_cast<int16_t>(low)), _mm256_set1_epi16(static_cast<int16_t>(high)),
                            1);
}

// The 2-bit codes of a Q2_K block (or Q3_K's low bits) as four vectors:
// element 64k + j sits at bits 2s of byte 32 (k / 2) + j % 32 with
// s = 2 (k % 2) + j / 32.
[[gnu::always_inline]] inline void decode_2bit_codes(const uint8_t* qs, __m512i (&codes)[4]) {
  const __m512i mask = _mm512_set1_epi8(3);
  for (int k = 0; k < 4; ++k) {
    const __m512i packed = _mm512_broadcast_i64x4(load256(qs + 32 * (k / 2)));
    const __m512i shifts = per_half16(4 * (k % 2), 4 * (k % 2) + 2);
    codes[k] = _mm512_and_si512(_mm512_srlv_epi16(packed, shifts), mask);
  }
}

struct Q2_KDecoded {
  __m512i codes[4];    // elements 64k .. 64k+63, codes 0..3
  __m512i scale16[4];  // groups 4k .. 4k+3: scales in int16 lanes of 8
  __m256i mins16;      // the 16 mins as int16: against the 16 activation sums
  float d, dmin;
};

[[gnu::always_inline]] inline Q2_KDecoded decode_q2_k(const BlockQ2_K& block, const __m512i (&scale_index)[4]) {
  Q2_KDecoded out;
  decode_2bit_codes(block.qs, out.codes);
  const __m256i packed = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block.scales)));
  const __m512i scales = _mm512_castsi256_si512(_mm256_and_si256(packed, _mm256_set1_epi16(0x0F)));
  for (int k = 0; k < 4; ++k) out.scale16[k] = _mm512_permutexvar_epi16(scale_index[k], scales);
  out.mins16 = _mm256_srli_epi16(packed, 4);
  out.d = _cvtsh_ss(block.d);
  out.dmin = _cvtsh_ss(block.dmin);
  return out;
}

// A Q3_K or Q6_K block: codes and signed scales, values code - offset.
struct SymmetricDecoded {
  __m512i codes[4];    // elements 64k .. 64k+63
  __m512i scale16[4];  // groups 4k .. 4k+3: scales in int16 lanes of 8
  __m256i scales_i16;  // the 16 scales as int16, for the offset term
  float d;
};

// The sixteen 6-bit scales of a Q3_K block (k_scales.h) minus 32, as int16.
__m256i q3_k_scales(const uint8_t* packed) {
  const uint32_t low0 = load_u32(packed), low1 = load_u32(packed + 4), high = load_u32(packed + 8);
  const uint32_t m4 = 0x0F0F0F0Fu, m2 = 0x03030303u;
  const __m128i bytes = _mm_setr_epi32(static_cast<int>((low0 & m4) | ((high & m2) << 4)),
                                       static_cast<int>((low1 & m4) | (((high >> 2) & m2) << 4)),
                                       static_cast<int>(((low0 >> 4) & m4) | (((high >> 4) & m2) << 4)),
                                       static_cast<int>(((low1 >> 4) & m4) | (((high >> 6) & m2) << 4)));
  return _mm256_sub_epi16(_mm256_cvtepu8_epi16(bytes), _mm256_set1_epi16(32));
}

// Q3_K: the low two bits as Q2_K's, bit 2 from hmask (bit s of byte l for
// element 32s + l: vector k's lower half takes bit 2k, its upper bit 2k + 1).
[[gnu::always_inline]] inline SymmetricDecoded decode_q3_k(const BlockQ3_K& block,
                                                           const __m512i (&scale_index)[4]) {
  SymmetricDecoded out;
  decode_2bit_codes(block.qs, out.codes);
  const __m512i hmask = _mm512_broadcast_i64x4(load256(block.hmask));
  const __m512i bit2 = _mm512_set1_epi8(4);
  for (int k = 0; k < 4; ++k) {
    // Bit b of each byte to bit 2: a 16-bit shift left by 2 - b or right by
    // b - 2 brings in no neighbouring byte's bit at bit 2.
    const int b0 = 2 * k, b1 = 2 * k + 1;
    const __m512i left = per_half16(b0 <= 2 ? 2 - b0 : 0, b1 <= 2 ? 2 - b1 : 0);
    const __m512i right = per_half16(b0 > 2 ? b0 - 2 : 0, b1 > 2 ? b1 - 2 : 0);
    const __m512i high = _mm512_and_si512(_mm512_srlv_epi16(_mm512_sllv_epi16(hmask, left), right), bit2);
    out.codes[k] = _mm512_or_si512(out.codes[k], high);
  }
  out.scales_i16 = q3_k_scales(block.scales);
  const __m512i scales = _mm512_castsi256_si512(out.scales_i16);
  for (int k = 0; k < 4; ++k) out.scale16[k] = _mm512_permutexvar_epi16(scale_index[k], scales);
  out.d = _cvtsh_ss(block.d);
  return out;
}

[[gnu::always_inline]] inline SymmetricDecoded decode_q6_k(const BlockQ6_K& block,
                                                    const __m512i (&scale_index)[4]) {
  SymmetricDecoded out;
  const __m512i low_mask = _mm512_set1_epi8(0x0F);
  const __m512i high_mask = _mm512_set1_epi8(0x30);
  // Element l + 32j of a half takes bits 2j, 2j+1 of qh[l] as bits 4, 5.
  const __m512i shift_up = _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(2), 1);
  const __m512i shift_down = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(2), 1);
  for (int half = 0; half < 2; ++half) {
    const __m512i ql = _mm512_loadu_si512(block.ql + 64 * half);
    const __m512i qh = _mm512_broadcast_i64x4(load256(block.qh + 32 * half));
    const __m512i h01 = _mm512_and_si512(_mm512_sllv_epi16(qh, shift_up), high_mask);
    const __m512i h23 = _mm512_and_si512(_mm512_srlv_epi16(qh, shift_down), high_mask);
    out.codes[2 * half] = _mm512_or_si512(_mm512_and_si512(ql, low_mask), h01);
    out.codes[2 * half + 1] =
        _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), low_mask), h23);
  }
  out.scales_i16 =
      _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block.scales)));
  const __m512i scales = _mm512_castsi256_si512(out.scales_i16);
  for (int k = 0; k < 4; ++k) out.scale16[k] = _mm512_permutexvar_epi16(scale_index[k], scales);
  out.d = _cvtsh_ss(block.d);
  return out;
}

// d_a * d * (sum_g sc_g dot_g - 2^kShift sum_g sc_g bsums_g), in lanes.
template <int kShift>
__m512 symmetric_term(const SymmetricDecoded& w, const BlockQ8_K& a, __m512 acc) {
  __m512i isum = _mm512_setzero_si512();
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    const __m512i pairs = _mm512_maddubs_epi16(w.codes[k], _mm512_loadu_si512(a.qs + 64 * k));
    isum = _mm512_dpwssd_epi32(isum, pairs, w.scale16[k]);
  }
  const __m256i offset = _mm256_madd_epi16(load256(a.bsums), w.scales_i16);
  isum = _mm512_sub_epi32(isum, _mm512_zextsi256_si512(_mm256_slli_epi32(offset, kShift)));
  return _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_set1_ps(a.d * w.d), acc);
}

struct Q2_KWeights {
  using Block = BlockQ2_K;
  static constexpr int kLanesPerScale = 8;  // groups of 16 = 8 int16 pairs
  static Q2_KDecoded decode(const Block& b, const __m512i (&idx)[4]) { return decode_q2_k(b, idx); }
  static __m512 term(const Q2_KDecoded& w, const BlockQ8_K& a, __m512 acc) { return scale_min_term(w, a, acc); }
};
struct Q3_KWeights {
  using Block = BlockQ3_K;
  static constexpr int kLanesPerScale = 8;
  static SymmetricDecoded decode(const Block& b, const __m512i (&idx)[4]) { return decode_q3_k(b, idx); }
  static __m512 term(const SymmetricDecoded& w, const BlockQ8_K& a, __m512 acc) {
    return symmetric_term<2>(w, a, acc);
  }
};
struct Q6_KWeights {
  using Block = BlockQ6_K;
  static constexpr int kLanesPerScale = 8;  // groups of 16 = 8 int16 pairs
  static SymmetricDecoded decode(const Block& b, const __m512i (&idx)[4]) { return decode_q6_k(b, idx); }
  static __m512 term(const SymmetricDecoded& w, const BlockQ8_K& a, __m512 acc) {
    return symmetric_term<5>(w, a, acc);
  }
};

}  // namespace

void matmul_q2_k(const MatmulTask& task) { kquant_matmul<Q2_KWeights>(task); }
void matmul_q3_k(const MatmulTask& task) { kquant_matmul<Q3_KWeights>(task); }
void matmul_q6_k(const MatmulTask& task) { kquant_matmul<Q6_KWeights>(task); }

}  // namespace met::cpu::avx512
