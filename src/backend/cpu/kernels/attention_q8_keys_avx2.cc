// The AVX2 scores pass over Q8_0 keys (q8_keys.h), the first pass of
// attn::avx2::chunk_q8_0. Each query is quantized once per chunk; then per
// 8 tokens of a block and 4 dims, the keys' codes (back to signed) times 4
// broadcast query codes by vpmaddubsw on |q| and the keys signed by q (no
// pair can saturate: Q8_0 codes are within +-127) and vpmaddwd to 32 bits;
// per 32 dims one convert and one fma with the keys' scales times the
// query's. The same integers and the same float operations in the same
// order as attn::scalar, so the two give the same bits. Prefetches the keys
// two blocks ahead and this block's values. Built with -march=x86-64-v3 only.
// Threading: pure function. Tested by tests/backend/attention_test.cc and
// attention_window_test.cc.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "backend/cpu/kernels/attention_chunk.h"
#include "backend/cpu/q8_keys.h"

namespace met::cpu::attn::avx2 {
namespace {

constexpr int32_t kPrefetchBlocks = 2;  // how far ahead the keys are prefetched

int32_t code_quad(const int8_t* codes) {
  int32_t v;
  std::memcpy(&v, codes, sizeof(v));
  return v;
}

void prefetch_head(const uint8_t* head, int64_t bytes) {
  if (head == nullptr) return;
  for (int64_t b = 0; b < bytes; b += 64) _mm_prefetch(reinterpret_cast<const char*>(head + b), _MM_HINT_T0);
}

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
      const __m256i qq = _mm256_set1_epi32(code_quad(qc + 4 * j));
      const __m256i pairs = _mm256_maddubs_epi16(_mm256_abs_epi8(qq), _mm256_sign_epi8(k, qq));
      dot = _mm256_add_epi32(dot, _mm256_madd_epi16(pairs, ones));
    }
    const __m256 kd = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(scales + 32 * b)));
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_mul_ps(kd, _mm256_set1_ps(q.d[b])), acc);
  }
  return acc;
}

__m256i first_lanes(int32_t n) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), lane);
}

}  // namespace

void scores_q8_keys(const ChunkJob& job, int32_t g0) {
  const int64_t query_bytes = q8_query_bytes(job.head_dim);
  for (int32_t i = 0; i < job.num_queries; ++i) {
    quantize_query_q8(job.q[i], job.head_dim, job.query_codes + i * query_bytes);
  }
  const int64_t head_bytes = kBlockTokens * job.row_bytes;
  const int32_t groups = (job.num_tokens + kBlockTokens - 1) / kBlockTokens;
  for (int32_t g = g0; g < std::min(groups, g0 + kPrefetchBlocks); ++g) {
    prefetch_head(ahead_rows(job, g, job.k_offset), head_bytes);
  }
  const __m256 scale = _mm256_set1_ps(job.scale);
  for (int32_t g = g0; g < groups; ++g) {
    prefetch_head(ahead_rows(job, g + kPrefetchBlocks, job.k_offset), head_bytes);
    prefetch_head(ahead_rows(job, g, job.v_offset), head_bytes);
    const uint8_t* head = ahead_rows(job, g, job.k_offset);
    for (int32_t i = 0; i < job.num_queries; ++i) {
      const int32_t n = job.limit[i] - kBlockTokens * g;
      if (n <= 0 || query_start(job, i) >= kBlockTokens * (g + 1)) continue;
      const QueryQ8 q = q8_query_at(job.query_codes + i * query_bytes, job.head_dim);
      float* s = job.scores + i * kChunkTokens + kBlockTokens * g;
      for (int32_t half = 0; half < 2 && 8 * half < n; ++half) {
        const __m256 x = _mm256_mul_ps(half_scores(head, job.head_dim, half, q), scale);
        _mm256_maskstore_ps(s + 8 * half, first_lanes(n - 8 * half), x);
      }
    }
  }
}

}  // namespace met::cpu::attn::avx2
