// The AVX-512 scores pass over Q8_0 keys (q8_keys.h), the first pass of
// attn::avx512::chunk_q8_0. Each query is quantized once per chunk; then per
// block of 16 tokens and 32 dims, eight vpdpbusd (the keys' u8 codes times
// 4 broadcast query codes) give the 16 tokens' integer dots, which one
// convert and one fma with the keys' scales times the query's add to the 16
// scores: no per-element conversion and no transpose. The same integers and
// the same float operations in the same order as attn::scalar, so the two
// give the same bits. The pass around it (quantizing, prefetching, which
// query reads which block) is attention_q8_keys.h's. Built with
// -march=x86-64-v4 + VNNI + BF16 only.
// Threading: pure function. Tested by tests/backend/attention_test.cc and
// attention_window_test.cc.
#include "core/avx512_intrinsics.h"

#include "backend/cpu/kernels/attention_q8_keys.h"

namespace met::cpu::attn::avx512 {
namespace {

// Unscaled scores of the 16 tokens of `head` (a kv head's keys of one
// block) for query q.
[[gnu::always_inline]] inline __m512 block_scores(const uint8_t* head, int32_t head_dim, const QueryQ8& q) {
  const uint8_t* scales = head + q8_key_scales_offset(head_dim);
  __m512 acc = _mm512_setzero_ps();
  for (int32_t b = 0; b < head_dim / 32; ++b) {
    const uint8_t* codes = head + int64_t{b} * 8 * kQ8KeyQuadBytes;
    const int8_t* qc = q.codes + 32 * b;
    __m512i even = _mm512_setzero_si512();
    __m512i odd = _mm512_setzero_si512();
#pragma GCC unroll 4
    for (int j = 0; j < 8; j += 2) {
      even = _mm512_dpbusd_epi32(even, _mm512_loadu_si512(codes + j * kQ8KeyQuadBytes),
                                 _mm512_set1_epi32(q8_code_quad(qc + 4 * j)));
      odd = _mm512_dpbusd_epi32(odd, _mm512_loadu_si512(codes + (j + 1) * kQ8KeyQuadBytes),
                                _mm512_set1_epi32(q8_code_quad(qc + 4 * j + 4)));
    }
    const __m512i dot = _mm512_sub_epi32(_mm512_add_epi32(even, odd), _mm512_set1_epi32(q.bias[b]));
    const __m512 kd = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(scales + 32 * b)));
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(kd, _mm512_set1_ps(q.d[b])), acc);
  }
  return acc;
}

}  // namespace

void scores_q8_keys(const ChunkJob& job, int32_t g0) {
  const __m512 scale = _mm512_set1_ps(job.scale);
  q8_keys_scores_pass(job, g0, [&](const uint8_t* head, const QueryQ8& q, float* scores, int32_t n) {
    const auto lanes = static_cast<__mmask16>(n >= 16 ? 0xFFFFu : (1u << n) - 1u);
    _mm512_mask_storeu_ps(scores, lanes, _mm512_mul_ps(block_scores(head, job.head_dim, q), scale));
  });
}

}  // namespace met::cpu::attn::avx512
