// AVX-512 matmul kernels for Q4_K, Q5_K and IQ4_XS weights (groups of 32)
// against Q8_K activations, and the AVX-512 Q8_K activation quantizer (bit for
// bit src/tensor's reference). A super-block is four 64-element vectors:
// vpmaddubsw of the unsigned weight codes (0..15, 0..31 for Q5_K, so pairs
// stay below 2^15) with the activation codes, then vpdpwssd against the group
// scales spread over int16 lanes, exact in int32 lanes. One float step per
// super-block follows the reference's formula: d_a d_w * I - d_a dmin * M
// (M from the activation's 16-element sums against the mins). IQ4_XS's signed values
// (vpshufb of its codes) go in as |v| with v's sign moved onto the
// activation (pairs below 2 * 127 * 128), then d_a d_w * I.
// Tiles as kquant_tile_avx512.h lays them out.
// core/avx512_intrinsics.h includes the intrinsics (GCC 12's headers warn).
// Threading: pure functions. Tested by tests/backend/matmul_test.cc.
#include "backend/cpu/kernels/kquant_tile_avx512.h"

namespace met::cpu::avx512 {
namespace {

struct Q4_KDecoded {
  __m512i codes[4];    // elements 64k .. 64k+63, codes 0..15
  __m512i scale16[4];  // sub-blocks 2k, 2k+1: scales in int16 lanes 0-15, 16-31
  __m256i mins16;      // m0 m0 m1 m1 .. m7 m7 as int16: against the 16 activation sums
  float d, dmin;
};

// The codes' low 4 bits, the scales and mins of a Q4_K or Q5_K block.
template <class Block>
[[gnu::always_inline]] inline Q4_KDecoded decode_q4_k(const Block& block,
                                                    const __m512i (&scale_index)[4]) {
  Q4_KDecoded out;
  const __m512i shifts = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(4), 1);
  const __m512i low_mask = _mm512_set1_epi8(0x0F);
  for (int k = 0; k < 4; ++k) {
    // Chunk k's low nibbles are sub-block 2k, its high nibbles 2k + 1.
    const __m512i packed = _mm512_broadcast_i64x4(load256(block.qs + 32 * k));
    out.codes[k] = _mm512_and_si512(_mm512_srlv_epi16(packed, shifts), low_mask);
  }
  // The 6-bit scales and mins (k_scales.h), unpacked four at a time.
  const uint32_t u0 = load_u32(block.scales), u1 = load_u32(block.scales + 4);
  const uint32_t u2 = load_u32(block.scales + 8);
  const uint32_t scales_lo = u0 & 0x3F3F3F3Fu;
  const uint32_t scales_hi = (u2 & 0x0F0F0F0Fu) | (((u0 >> 6) & 0x03030303u) << 4);
  const uint32_t mins_lo = u1 & 0x3F3F3F3Fu;
  const uint32_t mins_hi = ((u2 >> 4) & 0x0F0F0F0Fu) | (((u1 >> 6) & 0x03030303u) << 4);
  const __m128i packed = _mm_setr_epi32(static_cast<int>(scales_lo), static_cast<int>(scales_hi),
                                        static_cast<int>(mins_lo), static_cast<int>(mins_hi));
  const __m256i wide = _mm256_cvtepu8_epi16(packed);  // scales in lanes 0-7, mins in 8-15
  const __m512i scales = _mm512_castsi256_si512(wide);
  for (int k = 0; k < 4; ++k) out.scale16[k] = _mm512_permutexvar_epi16(scale_index[k], scales);
  const __m256i mins_index =
      _mm256_setr_epi16(8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15);
  out.mins16 = _mm256_permutexvar_epi16(mins_index, wide);
  out.d = _cvtsh_ss(block.d);
  out.dmin = _cvtsh_ss(block.dmin);
  return out;
}

// Q4_K's decoding plus the fifth bit: element 64k + l takes bit 2k of qh[l],
// element 64k + 32 + l bit 2k + 1, as bit 4 of its code (0..31).
[[gnu::always_inline]] inline Q4_KDecoded decode_q5_k(const BlockQ5_K& block,
                                                    const __m512i (&scale_index)[4]) {
  Q4_KDecoded out = decode_q4_k(block, scale_index);
  const __m512i qh = _mm512_broadcast_i64x4(load256(block.qh));
  const __m512i bit4 = _mm512_set1_epi8(0x10);
  const auto per_half = [](int low, int high) {  // int16 lanes: `low` in the lower 256 bits
    const auto lanes = [](int v) { return static_cast<int16_t>(v); };
    return _mm512_inserti64x4(_mm512_set1_epi16(lanes(low)), _mm256_set1_epi16(lanes(high)), 1);
  };
  for (int k = 0; k < 4; ++k) {
    // Bit b of each byte to bit 4: 16-bit shifts of 4 - b (left) or b - 4
    // (right) move no neighbouring byte's bit into bit 4.
    const int b0 = 2 * k, b1 = 2 * k + 1;
    const __m512i left = per_half(b0 <= 4 ? 4 - b0 : 0, b1 <= 4 ? 4 - b1 : 0);
    const __m512i right = per_half(b0 > 4 ? b0 - 4 : 0, b1 > 4 ? b1 - 4 : 0);
    const __m512i high = _mm512_and_si512(_mm512_srlv_epi16(_mm512_sllv_epi16(qh, left), right), bit4);
    out.codes[k] = _mm512_or_si512(out.codes[k], high);
  }
  return out;
}

struct Iq4XsDecoded {
  __m512i magnitude[4];  // elements 64k .. 64k+63: |kIq4Values[q]|
  __mmask64 negative[4];  // the elements whose value is negative
  __m512i scale16[4];    // groups 2k, 2k+1: ls - 32 in int16 lanes 0-15, 16-31
  float d;
};

// The eight 6-bit group scales of an IQ4_XS block minus 32, as int16.
__m128i iq4_xs_scales(const BlockIq4Xs& block) {
  const uint32_t low = load_u32(block.scales_l);
  const uint64_t nibbles = _pdep_u64(low, 0x0F0F0F0F0F0F0F0Full);        // ls & 15 of group g in byte g
  const uint64_t high = _pdep_u64(block.scales_h, 0x0303030303030303ull);  // ls >> 4 of group g in byte g
  const __m128i bytes = _mm_cvtsi64_si128(static_cast<long long>(nibbles | (high << 4)));
  return _mm_sub_epi16(_mm_cvtepu8_epi16(bytes), _mm_set1_epi16(32));
}

[[gnu::always_inline]] inline Iq4XsDecoded decode_iq4_xs(const BlockIq4Xs& block, const __m512i (&scale_index)[4]) {
  Iq4XsDecoded out;
  // Group 2k's 16 bytes then group 2k+1's, each as [low nibbles | high nibbles].
  const __m512i spread_index = _mm512_setr_epi64(0, 1, 0, 1, 2, 3, 2, 3);
  const __m512i shifts = _mm512_setr_epi64(0, 0, 0x0004000400040004, 0x0004000400040004, 0, 0,
                                           0x0004000400040004, 0x0004000400040004);
  const __m512i table = _mm512_broadcast_i32x4(
      _mm_setr_epi8(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113));
  for (int k = 0; k < 4; ++k) {
    const __m512i packed = _mm512_castsi256_si512(load256(block.qs + 32 * k));
    const __m512i spread = _mm512_permutexvar_epi64(spread_index, packed);
    const __m512i codes = _mm512_and_si512(_mm512_srlv_epi16(spread, shifts), _mm512_set1_epi8(0x0F));
    const __m512i values = _mm512_shuffle_epi8(table, codes);
    out.negative[k] = _mm512_movepi8_mask(values);
    out.magnitude[k] = _mm512_abs_epi8(values);
  }
  const __m512i scales = _mm512_castsi128_si512(iq4_xs_scales(block));
  for (int k = 0; k < 4; ++k) out.scale16[k] = _mm512_permutexvar_epi16(scale_index[k], scales);
  out.d = _cvtsh_ss(block.d);
  return out;
}

// d_a * d * sum_g (ls_g - 32) * sum |v| * (a with v's sign), in lanes.
__m512 iq4_xs_term(const Iq4XsDecoded& w, const BlockQ8_K& a, __m512 acc) {
  __m512i isum = _mm512_setzero_si512();
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    const __m512i act = _mm512_loadu_si512(a.qs + 64 * k);
    const __m512i signed_act = _mm512_mask_sub_epi8(act, w.negative[k], _mm512_setzero_si512(), act);
    const __m512i pairs = _mm512_maddubs_epi16(w.magnitude[k], signed_act);
    isum = _mm512_dpwssd_epi32(isum, pairs, w.scale16[k]);
  }
  return _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_set1_ps(a.d * w.d), acc);
}

struct Q4_KWeights {
  using Block = BlockQ4_K;
  static constexpr int kLanesPerScale = 16;  // sub-blocks of 32 = 16 int16 pairs
  static Q4_KDecoded decode(const Block& b, const __m512i (&idx)[4]) { return decode_q4_k(b, idx); }
  static __m512 term(const Q4_KDecoded& w, const BlockQ8_K& a, __m512 acc) {
    return scale_min_term(w, a, acc);
  }
};
struct Q5_KWeights {
  using Block = BlockQ5_K;
  static constexpr int kLanesPerScale = 16;
  static Q4_KDecoded decode(const Block& b, const __m512i (&idx)[4]) { return decode_q5_k(b, idx); }
  static __m512 term(const Q4_KDecoded& w, const BlockQ8_K& a, __m512 acc) {
    return scale_min_term(w, a, acc);
  }
};
struct Iq4XsWeights {
  using Block = BlockIq4Xs;
  static constexpr int kLanesPerScale = 16;  // groups of 32 = 16 int16 pairs
  static Iq4XsDecoded decode(const Block& b, const __m512i (&idx)[4]) { return decode_iq4_xs(b, idx); }
  static __m512 term(const Iq4XsDecoded& w, const BlockQ8_K& a, __m512 acc) { return iq4_xs_term(w, a, acc); }
};
}  // namespace

void matmul_q4_k(const MatmulTask& task) { kquant_matmul<Q4_KWeights>(task); }
void matmul_q5_k(const MatmulTask& task) { kquant_matmul<Q5_KWeights>(task); }
void matmul_iq4_xs(const MatmulTask& task) { kquant_matmul<Iq4XsWeights>(task); }

void prepare_q8_k(const float* x, int64_t cols, uint8_t* out) {
  auto* blocks = reinterpret_cast<BlockQ8_K*>(out);
  for (int64_t b = 0; b < cols / kQkK; ++b, x += kQkK) {
    __m512 amax = _mm512_setzero_ps();
    for (int j = 0; j < kQkK; j += 16) {
      // max(|x|, acc) keeps acc where |x| is NaN, as the reference does.
      amax = _mm512_max_ps(_mm512_abs_ps(_mm512_loadu_ps(x + j)), amax);
    }
    const float d = _mm512_reduce_max_ps(amax) / 127.0f;
    const float inverse = d != 0.0f ? 1.0f / d : 0.0f;
    BlockQ8_K& block = blocks[b];
    block.d = d;
    const __m512 scale = _mm512_set1_ps(inverse);
    const __m512 low = _mm512_set1_ps(-127.0f), high = _mm512_set1_ps(127.0f);
    for (int g = 0; g < kQkK / 16; ++g) {
      const __m512 s = _mm512_mul_ps(_mm512_loadu_ps(x + 16 * g), scale);
      const __m512i q = _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(s, low), high));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(block.qs + 16 * g), _mm512_cvtsepi32_epi8(q));
      block.bsums[g] = static_cast<int16_t>(_mm512_reduce_add_epi32(q));
    }
  }
}

}  // namespace met::cpu::avx512
