// The AVX-512 values pass over Q8_0 values (q8_values.h), the last pass of
// attn::avx512::chunk_q8_0. Per block of 16 tokens and 32 dims a query's
// weights (softmax weight times the tokens' scales) become 16-bit codes on
// the block's scale; then per pair of tokens and 16 dims the cached codes,
// widened to 16 bits once, go through one vpdpwssd per query of the tile
// (up to 4, a GQA group), and one convert and one fma per 16 dims add the
// block to each query's accumulator: no per-element float conversion. The
// same integers and the same float operations in the same order as
// attn::scalar, so the two give the same bits. The pass around it is
// attention_q8_values.h's. Built with -march=x86-64-v4 + VNNI + BF16 only.
// Threading: pure function. Tested by tests/backend/attention_test.cc and
// attention_window_test.cc.
#include "core/avx512_intrinsics.h"

#include "backend/cpu/kernels/attention_q8_values.h"

namespace met::cpu::attn::avx512 {
namespace {

// Query weights p of tokens [lo, hi) times the scales of `head`, as 16-bit
// codes per 32-dim block b at codes[16 b] with the block's largest |w| in
// m[b] (0: the block adds nothing, its codes 0). Every block's codes first,
// then the sums: the blocks' max-and-divide chains overlap instead of each
// stalling its block's sums.
[[gnu::always_inline]] inline void weight_codes(const uint8_t* head, int32_t head_dim, const float* p, int32_t lo,
                                                int32_t hi, int16_t* codes, float* m) {
  const auto lanes = static_cast<__mmask16>(((1u << hi) - 1u) & ~((1u << lo) - 1u));
  const __m512 pv = _mm512_maskz_loadu_ps(lanes, p);
  const auto* scales = reinterpret_cast<const __m256i*>(head + q8_value_scales_offset(head_dim));
  for (int32_t b = 0; b < head_dim / 32; ++b) {
    const __m512 w = _mm512_maskz_mul_ps(lanes, pv, _mm512_cvtph_ps(_mm256_loadu_si256(scales + b)));
    m[b] = _mm512_reduce_max_ps(_mm512_abs_ps(w));
    auto* at = reinterpret_cast<__m256i*>(codes + kBlockTokens * b);
    if (!(m[b] > 0.0f)) {
      _mm256_store_si256(at, _mm256_setzero_si256());  // summed beside other readers' codes, to no effect
      continue;
    }
    const __m512i q = _mm512_cvtps_epi32(_mm512_mul_ps(w, _mm512_set1_ps(kQ8ValueWeightMax / m[b])));
    _mm256_store_si256(at, _mm512_cvtepi32_epi16(q));
  }
}

// Adds to each of the N readers' acc its tokens of `head` weighted by its
// p: per 32-dim block and 16-dim half, each pair of tokens' codes widened
// once and multiplied into every reader's sum.
template <int N>
void tile_values(const uint8_t* head, int32_t head_dim, const Q8ValueReader* r) {
  alignas(32) int16_t codes[N][kMaxQ8ValueBlocks * kBlockTokens];
  float m[N][kMaxQ8ValueBlocks];
#pragma GCC unroll 4
  for (int q = 0; q < N; ++q) weight_codes(head, head_dim, r[q].p, r[q].lo, r[q].hi, codes[q], m[q]);
  for (int32_t b = 0; b < head_dim / 32; ++b) {
    bool any = false;
#pragma GCC unroll 4
    for (int q = 0; q < N; ++q) any |= m[q][b] > 0.0f;
    if (!any) continue;
    const uint8_t* line = head + int64_t{b} * kQ8ValueBlockBytes;
    for (int32_t h = 0; h < 2; ++h) {
      __m512i sum[N];
#pragma GCC unroll 4
      for (int q = 0; q < N; ++q) sum[q] = _mm512_setzero_si512();
#pragma GCC unroll 8
      for (int32_t k = 0; k < 8; ++k) {
        const __m512i x = _mm512_cvtepi8_epi16(
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(line + k * kQ8ValueLineBytes + 32 * h)));
#pragma GCC unroll 4
        for (int q = 0; q < N; ++q) {
          sum[q] = _mm512_dpwssd_epi32(sum[q], x, _mm512_set1_epi32(q8_weight_pair(codes[q] + kBlockTokens * b, k)));
        }
      }
#pragma GCC unroll 4
      for (int q = 0; q < N; ++q) {
        if (!(m[q][b] > 0.0f)) continue;
        float* out = r[q].acc + 32 * b + 16 * h;
        const __m512 s = _mm512_set1_ps(m[q][b] / kQ8ValueWeightMax);
        _mm512_store_ps(out, _mm512_fmadd_ps(s, _mm512_cvtepi32_ps(sum[q]), _mm512_load_ps(out)));
      }
    }
  }
}

}  // namespace

void values_q8(const ChunkJob& job, int32_t g0) {
  q8_values_pass<4>(job, g0, [&](const uint8_t* head, const Q8ValueReader* r, int32_t n) {
    switch (n) {
      case 1: tile_values<1>(head, job.head_dim, r); break;
      case 2: tile_values<2>(head, job.head_dim, r); break;
      case 3: tile_values<3>(head, job.head_dim, r); break;
      default: tile_values<4>(head, job.head_dim, r); break;
    }
  });
}

}  // namespace met::cpu::attn::avx512
