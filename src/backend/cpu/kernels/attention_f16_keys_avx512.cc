// The AVX-512 scores pass over F16 keys (f16_keys.h), the first pass of
// attn::avx512::chunk_f16. Per block of 16 tokens, per dim, one 32-byte load
// and convert gives that dim of the 16 tokens for up to four queries, and
// one fma per query (its dim broadcast) adds it to that query's 16 scores
// (a query's bits do not depend on the others): four accumulator chains
// (dims mod 4), summed (a0 + a1) + (a2 + a3), the very operations of
// attn::scalar in its order, so the two give the same bits; no transpose.
// The pass around it (prefetching, which query reads which block) is
// attention_f16_keys.h's. Built with -march=x86-64-v4 + VNNI + BF16 only.
// Threading: pure function. Tested by tests/backend/attention_test.cc and
// attention_window_test.cc.
#include "core/avx512_intrinsics.h"

#include "backend/cpu/kernels/attention_f16_keys.h"

namespace met::cpu::attn::avx512 {
namespace {

__m512 dim_of(const uint8_t* head, int32_t d) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(head + int64_t{d} * kF16KeyDimBytes)));
}

// The scores of the 16 tokens of `head` for the K queries job.q[idx[..]],
// each dim converted once for all of them; stored scaled, each query's
// first n. REQUIRES: head_dim % 4 == 0 (the cache's is a multiple of 8).
template <int K>
[[gnu::always_inline]] inline void block_scores(const ChunkJob& job, const uint8_t* head, int32_t g,
                                                const int32_t* idx, const F16KeyAhead& ahead) {
  const float* q[K];
  __m512 acc[K][4];
#pragma GCC unroll 4
  for (int a = 0; a < K; ++a) {
    q[a] = job.q[idx[a]];
    for (int c = 0; c < 4; ++c) acc[a][c] = _mm512_setzero_ps();
  }
  for (int32_t d = 0; d < job.head_dim; d += 4) {
    prefetch_ahead_line(ahead, d / 2);
    prefetch_ahead_line(ahead, d / 2 + 1);
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) {
      const __m512 k = dim_of(head, d + c);
#pragma GCC unroll 4
      for (int a = 0; a < K; ++a) acc[a][c] = _mm512_fmadd_ps(_mm512_set1_ps(q[a][d + c]), k, acc[a][c]);
    }
  }
  const __m512 scale = _mm512_set1_ps(job.scale);
#pragma GCC unroll 4
  for (int a = 0; a < K; ++a) {
    const __m512 s = _mm512_add_ps(_mm512_add_ps(acc[a][0], acc[a][1]), _mm512_add_ps(acc[a][2], acc[a][3]));
    const int32_t n = job.limit[idx[a]] - kBlockTokens * g;
    const auto lanes = static_cast<__mmask16>(n >= 16 ? 0xFFFFu : (1u << n) - 1u);
    _mm512_mask_storeu_ps(job.scores + idx[a] * kChunkTokens + kBlockTokens * g, lanes, _mm512_mul_ps(s, scale));
  }
}

}  // namespace

void scores_f16_keys(const ChunkJob& job, int32_t g0) {
  f16_keys_scores_pass(job, g0, [&](auto count, const uint8_t* head, int32_t g, const int32_t* idx,
                                    const F16KeyAhead& ahead) {
    block_scores<decltype(count)::value>(job, head, g, idx, ahead);
  });
}

}  // namespace met::cpu::attn::avx512
