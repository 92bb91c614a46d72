// The AVX-512 scores pass over F16 keys (f16_keys.h), the first pass of
// attn::avx512::chunk_f16. Per block of 16 tokens, per dim, one 32-byte load
// and convert gives that dim of the 16 tokens for up to four queries, and
// one fma per query (its dim broadcast) adds it to that query's 16 scores
// (a query's bits do not depend on the others): four accumulator chains
// (dims mod 4), summed (a0 + a1) + (a2 + a3), the very operations of
// attn::scalar in its order, so the two give the same bits; no transpose.
// Two blocks that the same queries read go together (pair_scores, up to
// four queries a call), two chains at a time, so each broadcast serves both.
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

// Query i's scores of block g (sums s, scaled), its first min(limit - 16 g,
// 16) of them (the rest may be past its limit).
[[gnu::always_inline]] inline void store_block_scores(const ChunkJob& job, int32_t i, int32_t g, __m512 s) {
  const int32_t n = job.limit[i] - kBlockTokens * g;
  const auto lanes = static_cast<__mmask16>(n >= 16 ? 0xFFFFu : (1u << n) - 1u);
  _mm512_mask_storeu_ps(job.scores + i * kChunkTokens + kBlockTokens * g, lanes,
                        _mm512_mul_ps(s, _mm512_set1_ps(job.scale)));
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
#pragma GCC unroll 4
  for (int a = 0; a < K; ++a) {
    const __m512 s = _mm512_add_ps(_mm512_add_ps(acc[a][0], acc[a][1]), _mm512_add_ps(acc[a][2], acc[a][3]));
    store_block_scores(job, idx[a], g, s);
  }
}

// acc[h][b][a] = chain c + h (h = 0, 1) of block b's scores for query a:
// the sum over dims c + h, c + h + 4, .. of q[a][d] k[d], in that order.
// Each dim of the two blocks' keys is converted once, each query's dim
// broadcast once for both blocks. Iteration j prefetches lines 2 j and
// 2 j + 1 of ahead[c / 2] (chains 0 and 2 cover both aheads, in order).
template <int K>
[[gnu::always_inline]] inline void pair_chains(const ChunkJob& job, const uint8_t* const (&heads)[2],
                                               const float* const (&q)[K], const F16KeyAhead (&ahead)[2], int c,
                                               __m512 (&acc)[2][2][K]) {
#pragma GCC unroll 16
  for (int x = 0; x < 4 * K; ++x) acc[x / (2 * K)][x / K % 2][x % K] = _mm512_setzero_ps();
  for (int32_t d = c, j = 0; d < job.head_dim; d += 4, ++j) {
    prefetch_ahead_line(ahead[c / 2], 2 * j);
    prefetch_ahead_line(ahead[c / 2], 2 * j + 1);
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const __m512 k0 = dim_of(heads[0], d + h), k1 = dim_of(heads[1], d + h);
#pragma GCC unroll 4
      for (int a = 0; a < K; ++a) {
        const __m512 x = _mm512_set1_ps(q[a][d + h]);
        acc[h][0][a] = _mm512_fmadd_ps(x, k0, acc[h][0][a]);
        acc[h][1][a] = _mm512_fmadd_ps(x, k1, acc[h][1][a]);
      }
    }
  }
}

// block_scores for blocks g and g + 1, read in full by the K queries (block
// g + 1 up to each one's limit). Chains 0 and 1 run together, then 2 and 3
// (each chain's dims in order, then (a0 + a1) + (a2 + a3), as
// block_scores), so 16 x K accumulators serve both blocks: per dim of
// both, 2 loads and K broadcasts feed 2 K fmas, where one block's pass
// loads 1 + K for K (the loads, about 2 a cycle on Zen 5, bounded it, not
// the fmas).
template <int K>
[[gnu::always_inline]] inline void pair_scores(const ChunkJob& job, const uint8_t* const (&heads)[2], int32_t g,
                                               const int32_t* idx, const F16KeyAhead (&ahead)[2]) {
  const float* q[K];
#pragma GCC unroll 4
  for (int a = 0; a < K; ++a) q[a] = job.q[idx[a]];
  __m512 lo[2][K], t[2][2][K];
  pair_chains<K>(job, heads, q, ahead, 0, t);
#pragma GCC unroll 8
  for (int x = 0; x < 2 * K; ++x) lo[x / K][x % K] = _mm512_add_ps(t[0][x / K][x % K], t[1][x / K][x % K]);
  pair_chains<K>(job, heads, q, ahead, 2, t);
#pragma GCC unroll 8
  for (int x = 0; x < 2 * K; ++x) {
    const int b = x / K, a = x % K;
    const __m512 s = _mm512_add_ps(lo[b][a], _mm512_add_ps(t[0][b][a], t[1][b][a]));
    store_block_scores(job, idx[a], g + b, s);
  }
}

}  // namespace

void scores_f16_keys(const ChunkJob& job, int32_t g0) {
  f16_keys_scores_pass(
      job, g0,
      [&](auto count, const uint8_t* head, int32_t g, const int32_t* idx, const F16KeyAhead& ahead) {
        block_scores<decltype(count)::value>(job, head, g, idx, ahead);
      },
      [&](auto count, const uint8_t* const (&heads)[2], int32_t g, const int32_t* idx,
          const F16KeyAhead (&ahead)[2]) { pair_scores<decltype(count)::value>(job, heads, g, idx, ahead); });
}

}  // namespace met::cpu::attn::avx512
