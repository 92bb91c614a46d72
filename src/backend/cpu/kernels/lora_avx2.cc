// AVX2 LoRA kernels (lora_kernels.h): lora_avx512.cc's order with 8 lanes
// per vector; shrink's last partial vector of inputs is summed lane by lane,
// expand's last partial vector of outputs is masked. Results agree with the
// reference to float rounding.
// Threading: pure functions. Tested by tests/backend/lora_kernels_test.cc.
#include <immintrin.h>

#include "backend/cpu/kernels/lora_kernels.h"

namespace met::cpu::avx2 {
namespace {

// Lanes below `remaining` (all 8 from 8 on).
__m256i tail_mask(int64_t remaining) {
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int32_t>(remaining < 8 ? remaining : 8)), lanes);
}

float lora_hsum(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 h = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(h, _mm_movehdup_ps(h)));
}

// t[k0 .. k0 + n) for one row, n <= 4.
void shrink_rows_of_a(const float* a, int32_t k0, int32_t n, int64_t cols, const float* x, float* t) {
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  const int64_t full = cols / 8 * 8;
  for (int64_t c = 0; c < full; c += 8) {
    const __m256 xv = _mm256_loadu_ps(x + c);
    for (int32_t j = 0; j < n; ++j) acc[j] = _mm256_fmadd_ps(_mm256_loadu_ps(a + (k0 + j) * cols + c), xv, acc[j]);
  }
  for (int32_t j = 0; j < n; ++j) {
    float sum = lora_hsum(acc[j]);
    for (int64_t c = full; c < cols; ++c) sum += a[(k0 + j) * cols + c] * x[c];
    t[k0 + j] = sum;
  }
}

}  // namespace

void lora_shrink(const float* a, int32_t rank, int64_t cols, const float* x, int64_t x_stride, const int32_t* rows,
                 int64_t num_rows, float* t, int64_t t_stride) {
  // Four rows of A at a time for every row of x: those rows stay in L1 while
  // the group's rows stream past them, so A is read from memory once per group.
  for (int32_t k = 0; k < rank; k += 4) {
    for (int64_t i = 0; i < num_rows; ++i) {
      shrink_rows_of_a(a, k, rank - k < 4 ? rank - k : 4, cols, x + rows[i] * x_stride, t + rows[i] * t_stride);
    }
  }
}

void lora_expand(const float* bt, int32_t rank, int64_t out_cols, float scale, const float* t, int64_t t_stride,
                 const int32_t* rows, int64_t num_rows, float* y, int64_t y_stride, int64_t o_begin, int64_t o_end) {
  const __m256 s = _mm256_set1_ps(scale);
  for (int64_t i = 0; i < num_rows; ++i) {
    const float* ti = t + rows[i] * t_stride;
    float* yi = y + rows[i] * y_stride;
    int64_t o = o_begin;
    for (; o + 32 <= o_end; o += 32) {
      __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
      for (int32_t k = 0; k < rank; ++k) {
        const __m256 tk = _mm256_set1_ps(ti[k]);
        const float* bk = bt + k * out_cols + o;
        for (int v = 0; v < 4; ++v) acc[v] = _mm256_fmadd_ps(tk, _mm256_loadu_ps(bk + 8 * v), acc[v]);
      }
      for (int v = 0; v < 4; ++v) {
        _mm256_storeu_ps(yi + o + 8 * v, _mm256_add_ps(_mm256_loadu_ps(yi + o + 8 * v), _mm256_mul_ps(s, acc[v])));
      }
    }
    // The rest 8 at a time, the last vector masked: every output takes the
    // same operations wherever a range starts or ends.
    for (; o < o_end; o += 8) {
      const __m256i m = tail_mask(o_end - o);
      __m256 acc = _mm256_setzero_ps();
      for (int32_t k = 0; k < rank; ++k) {
        acc = _mm256_fmadd_ps(_mm256_set1_ps(ti[k]), _mm256_maskload_ps(bt + k * out_cols + o, m), acc);
      }
      _mm256_maskstore_ps(yi + o, m, _mm256_add_ps(_mm256_maskload_ps(yi + o, m), _mm256_mul_ps(s, acc)));
    }
  }
}

}  // namespace met::cpu::avx2
