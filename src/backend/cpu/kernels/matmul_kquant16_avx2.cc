// AVX2 matmul kernels for the K-quants of 16-element groups, Q2_K, Q3_K and
// Q6_K, against Q8_K activations. Per super-block and (row, column) pair:
// vpmaddubsw of the unsigned weight codes (Q2_K 0..3, Q3_K 0..7 for values
// -4..3, Q6_K 0..63 for values -32..31) with the activation codes, vpmaddwd
// against the group scales, summed in int32 lanes (exact); then one float
// step per super-block, the same formula as the reference: d_a d_w * I - d_a
// dmin * M for Q2_K (the mins against the activation's 16-element sums),
// d_a d_w * (I - o S) for Q3_K (o = 4) and Q6_K (o = 32), S the same sums
// against the scales.
// Tiles as kquant_tile_avx2.h lays them out.
// Built with -march=x86-64-v3: includes only intrinsics and declarations.
// Threading: pure functions. Tested by tests/backend/matmul_test.cc.
#include "backend/cpu/kernels/kquant_tile_avx2.h"

namespace met::cpu::avx2 {
namespace {

// The 2-bit codes of a Q2_K block (or Q3_K's low bits), 32 elements per
// vector: element 32j + l sits at bits 2 (j % 4) of byte 32 (j / 4) + l.
[[gnu::always_inline]] inline void decode_2bit_codes(const uint8_t* qs, __m256i (&codes)[8]) {
  const __m256i mask = _mm256_set1_epi8(3);
  for (int j = 0; j < 8; ++j) {
    const __m256i packed = load256(qs + 32 * (j / 4));
    codes[j] = _mm256_and_si256(_mm256_srl_epi16(packed, _mm_cvtsi32_si128(2 * (j % 4))), mask);
  }
}

// Groups 2j and 2j + 1 of 16 int16 scales in the lower and upper halves.
[[gnu::always_inline]] inline void spread_scales(__m256i scales_i16, __m256i (&scale16)[8]) {
  alignas(32) int16_t s[16];
  _mm256_store_si256(reinterpret_cast<__m256i*>(s), scales_i16);
  for (int j = 0; j < 8; ++j) scale16[j] = _mm256_set_m128i(_mm_set1_epi16(s[2 * j + 1]), _mm_set1_epi16(s[2 * j]));
}

struct Q2_KDecoded {
  __m256i codes[8];    // 32 elements each, in order: codes 0..3
  __m256i scale16[8];  // groups 2j, 2j+1: scales as int16, 8 lanes each
  __m256i mins16;      // the 16 mins as int16: against the 16 activation sums
  float d, dmin;
};

[[gnu::always_inline]] inline Q2_KDecoded decode_q2_k(const BlockQ2_K& block) {
  Q2_KDecoded out;
  decode_2bit_codes(block.qs, out.codes);
  const __m256i packed = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block.scales)));
  spread_scales(_mm256_and_si256(packed, _mm256_set1_epi16(0x0F)), out.scale16);
  out.mins16 = _mm256_srli_epi16(packed, 4);
  out.d = _cvtsh_ss(block.d);
  out.dmin = _cvtsh_ss(block.dmin);
  return out;
}

// A Q3_K or Q6_K block: codes and signed scales, values code - offset.
struct SymmetricDecoded {
  __m256i codes[8];    // 32 elements each, in order
  __m256i scale16[8];  // groups 2j, 2j+1: scales as int16, 8 lanes each
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

// Q3_K: the low two bits as Q2_K's, bit 2 from hmask (bit j of byte l for
// element 32j + l), brought to bit 2 by a 16-bit shift that moves no
// neighbouring byte's bit there.
[[gnu::always_inline]] inline SymmetricDecoded decode_q3_k(const BlockQ3_K& block) {
  SymmetricDecoded out;
  decode_2bit_codes(block.qs, out.codes);
  const __m256i hmask = load256(block.hmask);
  const __m256i bit2 = _mm256_set1_epi8(4);
  for (int j = 0; j < 8; ++j) {
    const __m256i moved = j <= 2 ? _mm256_sll_epi16(hmask, _mm_cvtsi32_si128(2 - j))
                                 : _mm256_srl_epi16(hmask, _mm_cvtsi32_si128(j - 2));
    out.codes[j] = _mm256_or_si256(out.codes[j], _mm256_and_si256(moved, bit2));
  }
  out.scales_i16 = q3_k_scales(block.scales);
  spread_scales(out.scales_i16, out.scale16);
  out.d = _cvtsh_ss(block.d);
  return out;
}

[[gnu::always_inline]] inline SymmetricDecoded decode_q6_k(const BlockQ6_K& block) {
  SymmetricDecoded out;
  const __m256i low_mask = _mm256_set1_epi8(0x0F);
  const __m256i high_mask = _mm256_set1_epi8(0x30);
  for (int half = 0; half < 2; ++half) {
    const __m256i ql0 = load256(block.ql + 64 * half);
    const __m256i ql1 = load256(block.ql + 64 * half + 32);
    const __m256i qh = load256(block.qh + 32 * half);
    // Element l + 32k takes bits 2k, 2k+1 of qh[l] as bits 4, 5.
    const __m256i h0 = _mm256_and_si256(_mm256_slli_epi16(qh, 4), high_mask);
    const __m256i h1 = _mm256_and_si256(_mm256_slli_epi16(qh, 2), high_mask);
    const __m256i h2 = _mm256_and_si256(qh, high_mask);
    const __m256i h3 = _mm256_and_si256(_mm256_srli_epi16(qh, 2), high_mask);
    __m256i* codes = out.codes + 4 * half;
    codes[0] = _mm256_or_si256(_mm256_and_si256(ql0, low_mask), h0);
    codes[1] = _mm256_or_si256(_mm256_and_si256(ql1, low_mask), h1);
    codes[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), low_mask), h2);
    codes[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), low_mask), h3);
  }
  for (int j = 0; j < 8; ++j) {
    out.scale16[j] = _mm256_set_m128i(_mm_set1_epi16(block.scales[2 * j + 1]),
                                      _mm_set1_epi16(block.scales[2 * j]));
  }
  out.scales_i16 =
      _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block.scales)));
  out.d = _cvtsh_ss(block.d);
  return out;
}

// d_a * d * (sum_g sc_g dot_g - 2^kShift sum_g sc_g bsums_g), in lanes.
template <int kShift>
__m256 symmetric_term(const SymmetricDecoded& w, const BlockQ8_K& a) {
  __m256i isum = _mm256_setzero_si256();
  for (int j = 0; j < 8; ++j) {
    const __m256i pairs = _mm256_maddubs_epi16(w.codes[j], load256(a.qs + 32 * j));
    isum = _mm256_add_epi32(isum, _mm256_madd_epi16(pairs, w.scale16[j]));
  }
  const __m256i offset = _mm256_madd_epi16(load256(a.bsums), w.scales_i16);
  isum = _mm256_sub_epi32(isum, _mm256_slli_epi32(offset, kShift));
  return _mm256_mul_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(a.d * w.d));
}

struct Q2_KWeights {
  using Block = BlockQ2_K;
  static Q2_KDecoded decode(const Block& b) { return decode_q2_k(b); }
  static __m256 term(const Q2_KDecoded& w, const BlockQ8_K& a) { return scale_min_term(w, a); }
};
struct Q3_KWeights {
  using Block = BlockQ3_K;
  static SymmetricDecoded decode(const Block& b) { return decode_q3_k(b); }
  static __m256 term(const SymmetricDecoded& w, const BlockQ8_K& a) { return symmetric_term<2>(w, a); }
};
struct Q6_KWeights {
  using Block = BlockQ6_K;
  static SymmetricDecoded decode(const Block& b) { return decode_q6_k(b); }
  static __m256 term(const SymmetricDecoded& w, const BlockQ8_K& a) { return symmetric_term<5>(w, a); }
};

}  // namespace

void matmul_q2_k(const MatmulTask& task) { kquant_matmul<Q2_KWeights>(task); }
void matmul_q3_k(const MatmulTask& task) { kquant_matmul<Q3_KWeights>(task); }
void matmul_q6_k(const MatmulTask& task) { kquant_matmul<Q6_KWeights>(task); }

}  // namespace met::cpu::avx2
