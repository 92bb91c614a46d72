// The AVX2 scores pass over Q8_0 keys (q8_keys.h), the first pass of
// attn::avx2::chunk_q8_0. Each query is quantized once per chunk; then per
// 8 tokens of a block and 4 dims, the keys' codes (back to signed) times 4
// broadcast query codes by vpmaddubsw on |q| and the keys signed by q (no
// pair can saturate: Q8_0 codes are within +-127) and vpmaddwd to 32 bits;
// per 32 dims one convert and one fma with the keys' scales times the
// query's. The same integers and the same float operations in the same
// order as attn::scalar, so the two give the same bits. The pass around it
// (quantizing, prefetching, which query reads which block) is
// attention_q8_keys.h's. Built with -march=x86-64-v3 only.
// Threading: pure function. Tested by tests/backend/attention_test.cc and
// attention_window_test.cc.
#include <immintrin.h>

#include "backend/cpu/kernels/attention_q8_keys.h"

namespace met::cpu::attn::avx2 {
namespace {

// Unscaled scores of tokens [8 half, 8 half + 8) of `head` (a kv head's
// keys of one block) for query q.
[[gnu::always_inline]] inline __m256 half_scores(const uint8_t* head, int32_t head_dim, int32_t half,
                                                 const QueryQ8& q) {
  const uint8_t* scales = head + q8_key_scales_offset(head_dim) + 16 * half;
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
  const __m256i ones = _mm256_set1_epi16(1);
  __m256 acc = _mm256_setzero_ps();
  for (int32_t b = 0; b < head_dim / 32; ++b) {
    const uint8_t* codes = head + int64_t{b} * 8 * kQ8KeyQuadBytes + 32 * half;
    const int8_t* qc = q.codes + 32 * b;
    __m256i dot = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) {
      const __m256i k = _mm256_xor_si256(
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes + j * kQ8KeyQuadBytes)), flip);
      const __m256i qq = _mm256_set1_epi32(q8_code_quad(qc + 4 * j));
      const __m256i pairs = _mm256_maddubs_epi16(_mm256_abs_epi8(qq), _mm256_sign_epi8(k, qq));
      dot = _mm256_add_epi32(dot, _mm256_madd_epi16(pairs, ones));
    }
    const __m256 kd = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(scales + 32 * b)));
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_mul_ps(kd, _mm256_set1_ps(q.d[b])), acc);
  }
  return acc;
}

}  // namespace

void scores_q8_keys(const ChunkJob& job, int32_t g0) {
  const __m256 scale = _mm256_set1_ps(job.scale);
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  q8_keys_scores_pass(job, g0, [&](const uint8_t* head, const QueryQ8& q, float* scores, int32_t n) {
    for (int32_t half = 0; half < 2 && 8 * half < n; ++half) {
      const __m256 x = _mm256_mul_ps(half_scores(head, job.head_dim, half, q), scale);
      _mm256_maskstore_ps(scores + 8 * half, _mm256_cmpgt_epi32(_mm256_set1_epi32(n - 8 * half), lane), x);
    }
  });
}

}  // namespace met::cpu::attn::avx2
