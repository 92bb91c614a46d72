// The AVX-512 values pass over Q8_0 values (q8_values.h), the last pass of
// attn::avx512::chunk_q8_0. Per block of 16 tokens and 32 dims a query's
// weights (softmax weight times the tokens' scales) become 16-bit codes on
// the block's scale; then per pair of tokens two vpdpwssd (16 dims each, the
// codes widened to 16 bits) add the pair's weighted codes, and one convert
// and one fma per 16 dims add the block to the accumulator: no per-element
// float conversion. The same integers and the same float operations in the
// same order as attn::scalar, so the two give the same bits. The pass around
// it is attention_q8_values.h's. Built with -march=x86-64-v4 + VNNI + BF16
// only.
// Threading: pure function. Tested by tests/backend/attention_test.cc and
// attention_window_test.cc.
#include "core/avx512_intrinsics.h"

#include "backend/cpu/kernels/attention_q8_values.h"

namespace met::cpu::attn::avx512 {
namespace {

// Query weights p of tokens [lo, hi) times the scales of `head`, as 16-bit
// codes per 32-dim block b at codes[16 b] with the block's largest |w| in
// m[b] (0: the block adds nothing). Every block's codes first, then the
// sums: the blocks' max-and-divide chains overlap instead of each stalling
// its block's sums.
[[gnu::always_inline]] inline void weight_codes(const uint8_t* head, int32_t head_dim, const float* p, int32_t lo,
                                                int32_t hi, int16_t* codes, float* m) {
  const auto lanes = static_cast<__mmask16>(((1u << hi) - 1u) & ~((1u << lo) - 1u));
  const __m512 pv = _mm512_maskz_loadu_ps(lanes, p);
  const auto* scales = reinterpret_cast<const __m256i*>(head + q8_value_scales_offset(head_dim));
  for (int32_t b = 0; b < head_dim / 32; ++b) {
    const __m512 w = _mm512_maskz_mul_ps(lanes, pv, _mm512_cvtph_ps(_mm256_loadu_si256(scales + b)));
    m[b] = _mm512_reduce_max_ps(_mm512_abs_ps(w));
    if (!(m[b] > 0.0f)) continue;
    const __m512i q = _mm512_cvtps_epi32(_mm512_mul_ps(w, _mm512_set1_ps(kQ8ValueWeightMax / m[b])));
    _mm256_store_si256(reinterpret_cast<__m256i*>(codes + kBlockTokens * b), _mm512_cvtepi32_epi16(q));
  }
}

// Adds to acc the values of tokens [lo, hi) of `head` weighted by p.
[[gnu::always_inline]] inline void block_values(const uint8_t* head, int32_t head_dim, const float* p, int32_t lo,
                                                int32_t hi, float* acc) {
  alignas(32) int16_t codes[kMaxQ8ValueBlocks * kBlockTokens];
  float m[kMaxQ8ValueBlocks];
  weight_codes(head, head_dim, p, lo, hi, codes, m);
  for (int32_t b = 0; b < head_dim / 32; ++b) {
    if (!(m[b] > 0.0f)) continue;
    const uint8_t* line = head + int64_t{b} * kQ8ValueBlockBytes;
    __m512i low = _mm512_setzero_si512();
    __m512i high = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int32_t k = 0; k < 8; ++k) {
      const __m512i wk = _mm512_set1_epi32(q8_weight_pair(codes + kBlockTokens * b, k));
      const auto* at = reinterpret_cast<const __m256i*>(line + k * kQ8ValueLineBytes);
      low = _mm512_dpwssd_epi32(low, _mm512_cvtepi8_epi16(_mm256_loadu_si256(at)), wk);
      high = _mm512_dpwssd_epi32(high, _mm512_cvtepi8_epi16(_mm256_loadu_si256(at + 1)), wk);
    }
    const __m512 s = _mm512_set1_ps(m[b] / kQ8ValueWeightMax);
    float* out = acc + 32 * b;
    _mm512_store_ps(out, _mm512_fmadd_ps(s, _mm512_cvtepi32_ps(low), _mm512_load_ps(out)));
    _mm512_store_ps(out + 16, _mm512_fmadd_ps(s, _mm512_cvtepi32_ps(high), _mm512_load_ps(out + 16)));
  }
}

}  // namespace

void values_q8(const ChunkJob& job, int32_t g0) {
  q8_values_pass(job, g0, [&](const uint8_t* head, const float* p, int32_t lo, int32_t hi, float* acc) {
    block_values(head, job.head_dim, p, lo, hi, acc);
  });
}

}  // namespace met::cpu::attn::avx512
