// The AVX2 scores pass over F16 keys (f16_keys.h), the first pass of
// attn::avx2::chunk_f16. Per 8 tokens of a block, per dim, one 16-byte load
// and convert gives that dim of the 8 tokens for up to four queries, and one
// fma per query adds it to that query's scores (a query's bits do not depend
// on the others): four accumulator chains (dims mod 4), summed
// (a0 + a1) + (a2 + a3), the very operations of attn::scalar in its order,
// so the two give the same bits. The pass around it (prefetching, which
// query reads which block) is attention_f16_keys.h's. Built with
// -march=x86-64-v3 only.
// Threading: pure function. Tested by tests/backend/attention_test.cc and
// attention_window_test.cc.
#include <immintrin.h>

#include "backend/cpu/kernels/attention_f16_keys.h"

namespace met::cpu::attn::avx2 {
namespace {

// The scores of tokens [8 half, 8 half + 8) of `head` for the K queries
// job.q[idx[..]], each dim converted once for all of them; stored scaled,
// each query's first n of the block. REQUIRES: head_dim % 4 == 0.
template <int K>
[[gnu::always_inline]] inline void half_scores(const ChunkJob& job, const uint8_t* head, int32_t g, int32_t half,
                                               const int32_t* idx, const F16KeyAhead& ahead) {
  const uint8_t* tokens = head + 16 * half;
  const float* q[K];
  __m256 acc[K][4];
#pragma GCC unroll 4
  for (int a = 0; a < K; ++a) {
    q[a] = job.q[idx[a]];
    for (int c = 0; c < 4; ++c) acc[a][c] = _mm256_setzero_ps();
  }
  for (int32_t d = 0; d < job.head_dim; d += 4) {
    prefetch_ahead_line(ahead, d / 2);
    prefetch_ahead_line(ahead, d / 2 + 1);
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) {
      const __m256 k = _mm256_cvtph_ps(
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(tokens + int64_t{d + c} * kF16KeyDimBytes)));
#pragma GCC unroll 4
      for (int a = 0; a < K; ++a) acc[a][c] = _mm256_fmadd_ps(_mm256_set1_ps(q[a][d + c]), k, acc[a][c]);
    }
  }
  const __m256 scale = _mm256_set1_ps(job.scale);
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
#pragma GCC unroll 4
  for (int a = 0; a < K; ++a) {
    const __m256 s = _mm256_add_ps(_mm256_add_ps(acc[a][0], acc[a][1]), _mm256_add_ps(acc[a][2], acc[a][3]));
    const int32_t n = job.limit[idx[a]] - kBlockTokens * g - 8 * half;
    float* out = job.scores + idx[a] * kChunkTokens + kBlockTokens * g + 8 * half;
    _mm256_maskstore_ps(out, _mm256_cmpgt_epi32(_mm256_set1_epi32(n), lane), _mm256_mul_ps(s, scale));
  }
}

template <int K>
void block_scores(const ChunkJob& job, const uint8_t* head, int32_t g, const int32_t* idx,
                  const F16KeyAhead& ahead) {
  int32_t most = 0;
  for (int a = 0; a < K; ++a) most = std::max(most, job.limit[idx[a]] - kBlockTokens * g);
  half_scores<K>(job, head, g, 0, idx, ahead);
  if (most > 8) half_scores<K>(job, head, g, 1, idx, F16KeyAhead{});
}

}  // namespace

void scores_f16_keys(const ChunkJob& job, int32_t g0) {
  f16_keys_scores_pass(job, g0, [&](auto count, const uint8_t* head, int32_t g, const int32_t* idx,
                                    const F16KeyAhead& ahead) {
    block_scores<decltype(count)::value>(job, head, g, idx, ahead);
  });
}

}  // namespace met::cpu::attn::avx2
