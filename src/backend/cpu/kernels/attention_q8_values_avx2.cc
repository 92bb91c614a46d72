// The AVX2 values pass over Q8_0 values (q8_values.h), the last pass of
// attn::avx2::chunk_q8_0: attention_q8_values_avx512.cc's arithmetic and
// tiles on 8-lane vectors, the 16-bit products summed by vpmaddwd (a pair of
// tokens per 32-bit lane, exact) and vpaddd instead of vpdpwssd. The same
// integers and the same float operations in the same order as attn::scalar,
// so the two give the same bits. Built with -march=x86-64-v3 only.
// Threading: pure function. Tested by tests/backend/attention_test.cc and
// attention_window_test.cc.
#include <immintrin.h>

#include "backend/cpu/kernels/attention_q8_values.h"

namespace met::cpu::attn::avx2 {
namespace {

float max_lane(__m256 x) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  return _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m)));
}

// Query weights p of tokens [lo, hi) times the scales of `head`, as 16-bit
// codes per 32-dim block b at codes[16 b] with the block's largest |w| in
// m[b] (0: the block adds nothing, its codes 0). Every block's codes first,
// then the sums: the blocks' max-and-divide chains overlap instead of each
// stalling its block's sums.
[[gnu::always_inline]] inline void weight_codes(const uint8_t* head, int32_t head_dim, const float* p, int32_t lo,
                                                int32_t hi, int16_t* codes, float* m) {
  const __m256i slot = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  __m256 in[2], pv[2];
  for (int32_t h = 0; h < 2; ++h) {
    const __m256i t = _mm256_add_epi32(slot, _mm256_set1_epi32(8 * h));
    const __m256i lanes = _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(lo), t),
                                              _mm256_cmpgt_epi32(_mm256_set1_epi32(hi), t));
    in[h] = _mm256_castsi256_ps(lanes);
    pv[h] = _mm256_maskload_ps(p + 8 * h, lanes);
  }
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const auto* scales = reinterpret_cast<const __m128i*>(head + q8_value_scales_offset(head_dim));
  for (int32_t b = 0; b < head_dim / 32; ++b) {
    const __m256 w0 = _mm256_and_ps(in[0], _mm256_mul_ps(pv[0], _mm256_cvtph_ps(_mm_loadu_si128(scales + 2 * b))));
    const __m256 w1 = _mm256_and_ps(in[1], _mm256_mul_ps(pv[1], _mm256_cvtph_ps(_mm_loadu_si128(scales + 2 * b + 1))));
    m[b] = max_lane(_mm256_max_ps(_mm256_andnot_ps(sign, w0), _mm256_andnot_ps(sign, w1)));
    auto* at = reinterpret_cast<__m256i*>(codes + kBlockTokens * b);
    if (!(m[b] > 0.0f)) {
      _mm256_store_si256(at, _mm256_setzero_si256());  // summed beside other readers' codes, to no effect
      continue;
    }
    const __m256 inv = _mm256_set1_ps(kQ8ValueWeightMax / m[b]);
    const __m256i q = _mm256_packs_epi32(_mm256_cvtps_epi32(_mm256_mul_ps(w0, inv)),
                                         _mm256_cvtps_epi32(_mm256_mul_ps(w1, inv)));
    _mm256_store_si256(at, _mm256_permute4x64_epi64(q, 0xD8));
  }
}

// Adds to each of the N readers' acc its tokens of `head` weighted by its
// p: per 32-dim block and 8-dim quarter, each pair of tokens' codes widened
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
    for (int32_t j = 0; j < 4; ++j) {
      __m256i sum[N];
#pragma GCC unroll 4
      for (int q = 0; q < N; ++q) sum[q] = _mm256_setzero_si256();
#pragma GCC unroll 8
      for (int32_t k = 0; k < 8; ++k) {
        const __m256i x = _mm256_cvtepi8_epi16(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(line + k * kQ8ValueLineBytes + 16 * j)));
#pragma GCC unroll 4
        for (int q = 0; q < N; ++q) {
          const __m256i wk = _mm256_set1_epi32(q8_weight_pair(codes[q] + kBlockTokens * b, k));
          sum[q] = _mm256_add_epi32(sum[q], _mm256_madd_epi16(x, wk));
        }
      }
#pragma GCC unroll 4
      for (int q = 0; q < N; ++q) {
        if (!(m[q][b] > 0.0f)) continue;
        float* out = r[q].acc + 32 * b + 8 * j;
        const __m256 s = _mm256_set1_ps(m[q][b] / kQ8ValueWeightMax);
        _mm256_store_ps(out, _mm256_fmadd_ps(s, _mm256_cvtepi32_ps(sum[q]), _mm256_load_ps(out)));
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

}  // namespace met::cpu::attn::avx2
