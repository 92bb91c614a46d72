// AVX2 matmul kernels for Q4_K, Q5_K and IQ4_XS weights (groups of 32)
// against Q8_K activations, and the AVX2 Q8_K activation quantizer (bit for
// bit src/tensor's reference: same max, same 1/d, same
// clamp-then-round-half-even). Per super-block and (row, column) pair:
// vpmaddubsw of the unsigned weight codes with the activation codes,
// vpmaddwd against the group scales, summed in int32 lanes (exact); then one
// float step per super-block, the same formula as the reference: d_a d_w * I
// - d_a dmin * M (the mins against the activation's 16-element sums).
// Tiles as kquant_tile_avx2.h lays them out.
// Built with -march=x86-64-v3: includes only intrinsics and declarations.
// Threading: pure functions. Tested by tests/backend/matmul_test.cc.
#include "backend/cpu/kernels/kquant_tile_avx2.h"

namespace met::cpu::avx2 {
namespace {

// A Q4_K block's eight 6-bit scales and mins (k_scales.h), as bytes.
struct ScalesMins {
  uint32_t scales[2];
  uint32_t mins[2];
};

ScalesMins unpack_q4_k_scales(const uint8_t* packed) {
  const uint32_t u0 = load_u32(packed), u1 = load_u32(packed + 4), u2 = load_u32(packed + 8);
  ScalesMins s;
  s.scales[0] = u0 & 0x3F3F3F3Fu;
  s.scales[1] = (u2 & 0x0F0F0F0Fu) | (((u0 >> 6) & 0x03030303u) << 4);
  s.mins[0] = u1 & 0x3F3F3F3Fu;
  s.mins[1] = ((u2 >> 4) & 0x0F0F0F0Fu) | (((u1 >> 6) & 0x03030303u) << 4);
  return s;
}

__m128i bytes8_to_i16(const uint32_t (&words)[2]) {
  return _mm_cvtepu8_epi16(_mm_set_epi32(0, 0, static_cast<int>(words[1]), static_cast<int>(words[0])));
}

struct Q4_KDecoded {
  __m256i codes[8];       // sub-block j: 32 codes 0..15
  __m256i scale16[8];     // sub-block j's scale in every int16 lane
  __m256i mins16;         // mins m0 m0 m1 m1 .. m7 m7 as int16: against the 16 activation sums
  float d, dmin;
};

// The codes' low 4 bits, the scales and mins of a Q4_K or Q5_K block.
template <class Block>
[[gnu::always_inline]] inline Q4_KDecoded decode_q4_k(const Block& block) {
  Q4_KDecoded out;
  const ScalesMins sm = unpack_q4_k_scales(block.scales);
  alignas(16) uint8_t scales[8];
  __builtin_memcpy(scales, sm.scales, 8);
  const __m256i low_mask = _mm256_set1_epi8(0x0F);
  for (int chunk = 0; chunk < 4; ++chunk) {
    const __m256i packed = load256(block.qs + 32 * chunk);
    out.codes[2 * chunk] = _mm256_and_si256(packed, low_mask);
    out.codes[2 * chunk + 1] = _mm256_and_si256(_mm256_srli_epi16(packed, 4), low_mask);
  }
  for (int j = 0; j < 8; ++j) out.scale16[j] = _mm256_set1_epi16(scales[j]);
  const __m128i mins = bytes8_to_i16(sm.mins);
  out.mins16 = _mm256_set_m128i(_mm_unpackhi_epi16(mins, mins), _mm_unpacklo_epi16(mins, mins));
  out.d = _cvtsh_ss(block.d);
  out.dmin = _cvtsh_ss(block.dmin);
  return out;
}

// Q4_K's decoding plus the fifth bit: element 64k + l takes bit 2k of qh[l],
// element 64k + 32 + l bit 2k + 1, as bit 4 of its code (0..31). A 16-bit
// shift of 4 - b (left) or b - 4 (right) brings bit b of every byte to bit 4
// without a neighbouring byte's bit.
[[gnu::always_inline]] inline Q4_KDecoded decode_q5_k(const BlockQ5_K& block) {
  Q4_KDecoded out = decode_q4_k(block);
  const __m256i qh = load256(block.qh);
  const __m256i bit4 = _mm256_set1_epi8(0x10);
  out.codes[0] = _mm256_or_si256(out.codes[0], _mm256_and_si256(_mm256_slli_epi16(qh, 4), bit4));
  out.codes[1] = _mm256_or_si256(out.codes[1], _mm256_and_si256(_mm256_slli_epi16(qh, 3), bit4));
  out.codes[2] = _mm256_or_si256(out.codes[2], _mm256_and_si256(_mm256_slli_epi16(qh, 2), bit4));
  out.codes[3] = _mm256_or_si256(out.codes[3], _mm256_and_si256(_mm256_slli_epi16(qh, 1), bit4));
  out.codes[4] = _mm256_or_si256(out.codes[4], _mm256_and_si256(qh, bit4));
  out.codes[5] = _mm256_or_si256(out.codes[5], _mm256_and_si256(_mm256_srli_epi16(qh, 1), bit4));
  out.codes[6] = _mm256_or_si256(out.codes[6], _mm256_and_si256(_mm256_srli_epi16(qh, 2), bit4));
  out.codes[7] = _mm256_or_si256(out.codes[7], _mm256_and_si256(_mm256_srli_epi16(qh, 3), bit4));
  return out;
}

struct Iq4XsDecoded {
  __m256i magnitude[8];  // group j: |kIq4Values[q]|, elements in order
  __m256i sign[8];       // group j: the values, to move their signs onto a
  __m256i scale16[8];    // group j's ls - 32 in every int16 lane
  float d;
};

[[gnu::always_inline]] inline Iq4XsDecoded decode_iq4_xs(const BlockIq4Xs& block) {
  Iq4XsDecoded out;
  const __m256i table = _mm256_broadcastsi128_si256(
      _mm_setr_epi8(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113));
  for (int j = 0; j < 8; ++j) {
    const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block.qs + 16 * j));
    const __m128i low = _mm_and_si128(packed, _mm_set1_epi8(0x0F));
    const __m128i high = _mm_and_si128(_mm_srli_epi16(packed, 4), _mm_set1_epi8(0x0F));
    const __m256i values = _mm256_shuffle_epi8(table, _mm256_set_m128i(high, low));
    out.magnitude[j] = _mm256_sign_epi8(values, values);
    out.sign[j] = values;
    const int ls = ((block.scales_l[j / 2] >> (4 * (j % 2))) & 0x0F) | (((block.scales_h >> (2 * j)) & 3) << 4);
    out.scale16[j] = _mm256_set1_epi16(static_cast<int16_t>(ls - 32));
  }
  out.d = _cvtsh_ss(block.d);
  return out;
}

// d_a * d * sum_j (ls_j - 32) * sum |v| * sign(a, v), in lanes.
__m256 iq4_xs_term(const Iq4XsDecoded& w, const BlockQ8_K& a) {
  __m256i isum = _mm256_setzero_si256();
  for (int j = 0; j < 8; ++j) {
    const __m256i act = _mm256_sign_epi8(load256(a.qs + 32 * j), w.sign[j]);
    isum = _mm256_add_epi32(isum, _mm256_madd_epi16(_mm256_maddubs_epi16(w.magnitude[j], act), w.scale16[j]));
  }
  return _mm256_mul_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(a.d * w.d));
}

struct Q4_KWeights {
  using Block = BlockQ4_K;
  static Q4_KDecoded decode(const Block& b) { return decode_q4_k(b); }
  static __m256 term(const Q4_KDecoded& w, const BlockQ8_K& a) { return scale_min_term(w, a); }
};
struct Q5_KWeights {
  using Block = BlockQ5_K;
  static Q4_KDecoded decode(const Block& b) { return decode_q5_k(b); }
  static __m256 term(const Q4_KDecoded& w, const BlockQ8_K& a) { return scale_min_term(w, a); }
};
struct Iq4XsWeights {
  using Block = BlockIq4Xs;
  static Iq4XsDecoded decode(const Block& b) { return decode_iq4_xs(b); }
  static __m256 term(const Iq4XsDecoded& w, const BlockQ8_K& a) { return iq4_xs_term(w, a); }
};
}  // namespace

void matmul_q4_k(const MatmulTask& task) { kquant_matmul<Q4_KWeights>(task); }
void matmul_q5_k(const MatmulTask& task) { kquant_matmul<Q5_KWeights>(task); }
void matmul_iq4_xs(const MatmulTask& task) { kquant_matmul<Iq4XsWeights>(task); }

void prepare_q8_k(const float* x, int64_t cols, uint8_t* out) {
  auto* blocks = reinterpret_cast<BlockQ8_K*>(out);
  const __m256 sign_mask = _mm256_set1_ps(-0.0f);
  for (int64_t b = 0; b < cols / kQkK; ++b, x += kQkK) {
    __m256 amax = _mm256_setzero_ps();
    for (int j = 0; j < kQkK; j += 8) {
      // max(|x|, acc) keeps acc where |x| is NaN, as the reference does.
      amax = _mm256_max_ps(_mm256_andnot_ps(sign_mask, _mm256_loadu_ps(x + j)), amax);
    }
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    const float d = _mm_cvtss_f32(m) / 127.0f;
    const float inverse = d != 0.0f ? 1.0f / d : 0.0f;
    BlockQ8_K& block = blocks[b];
    block.d = d;
    const __m256 scale = _mm256_set1_ps(inverse);
    const __m256 low = _mm256_set1_ps(-127.0f), high = _mm256_set1_ps(127.0f);
    for (int j = 0; j < kQkK; j += 32) {
      __m256i q[4];
      for (int v = 0; v < 4; ++v) {
        const __m256 s = _mm256_mul_ps(_mm256_loadu_ps(x + j + 8 * v), scale);
        q[v] = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(s, low), high));
      }
      // Pack 32 int32 -> 32 int8 in order (packs work per 128-bit lane).
      const __m256i w01 = _mm256_packs_epi32(q[0], q[1]);
      const __m256i w23 = _mm256_packs_epi32(q[2], q[3]);
      const __m256i b0123 = _mm256_packs_epi16(w01, w23);
      const __m256i codes =
          _mm256_permutevar8x32_epi32(b0123, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(block.qs + j), codes);
      // Sums of the two groups of 16: lanes 0-3 hold group j / 16, lanes 4-7 the next.
      const __m256i sums4 = _mm256_madd_epi16(
          _mm256_maddubs_epi16(_mm256_set1_epi8(1), codes), _mm256_set1_epi16(1));
      const __m128i pairs =
          _mm_hadd_epi32(_mm256_castsi256_si128(sums4), _mm256_extracti128_si256(sums4, 1));
      block.bsums[j / 16] = static_cast<int16_t>(_mm_extract_epi32(pairs, 0) + _mm_extract_epi32(pairs, 1));
      block.bsums[j / 16 + 1] =
          static_cast<int16_t>(_mm_extract_epi32(pairs, 2) + _mm_extract_epi32(pairs, 3));
    }
  }
}

}  // namespace met::cpu::avx2
