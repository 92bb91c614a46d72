// AVX-512 LoRA kernels (lora_kernels.h). Shrink: four of A's rows at a
// time against each row of the group in turn (one load of x for the four),
// 16 inputs per vector (masked at the end), each dot product reduced at its
// end. Expand: four panels of 16 outputs (B's packed layout) per pass,
// masked at the range's ends; per row the sum over k is t[k] broadcast
// times the panel's row k (fused multiply-add), then y += scale · sum. Sums
// group differently from the reference: results agree to float rounding.
// core/avx512_intrinsics.h includes the intrinsics (GCC 12's headers warn).
// Threading: pure functions. Tested by tests/backend/lora_kernels_test.cc.
#include "core/avx512_intrinsics.h"

#include <algorithm>

#include "backend/cpu/kernels/lora_kernels.h"

namespace met::cpu::avx512 {
namespace {

__mmask16 tail_mask(int64_t remaining) {
  return remaining >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << remaining) - 1);
}

// t[k0 .. k0 + n) for one row, n <= 4.
void shrink_rows_of_a(const float* a, int32_t k0, int32_t n, int64_t cols, const float* x, float* t) {
  __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
  for (int64_t c = 0; c < cols; c += 16) {
    const __mmask16 m = tail_mask(cols - c);
    const __m512 xv = _mm512_maskz_loadu_ps(m, x + c);
    for (int32_t j = 0; j < n; ++j) {
      acc[j] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + (k0 + j) * cols + c), xv, acc[j]);
    }
  }
  for (int32_t j = 0; j < n; ++j) t[k0 + j] = _mm512_reduce_add_ps(acc[j]);
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

void lora_expand(const float* bp, int32_t rank, int64_t /*out_cols*/, float scale, const float* t,
                 int64_t t_stride, const int32_t* rows, int64_t num_rows, float* y, int64_t y_stride, int64_t o_begin,
                 int64_t o_end) {
  const __m512 s = _mm512_set1_ps(scale);
  const int64_t panel_floats = int64_t{rank} * 16;
  // Up to four panels a pass; each is one contiguous run of rank vectors.
  for (int64_t p0 = o_begin / 16; p0 * 16 < o_end; p0 += 4) {
    __mmask16 m[4];
    for (int v = 0; v < 4; ++v) {
      const int64_t lo = std::max(o_begin, (p0 + v) * 16), hi = std::min(o_end, (p0 + v + 1) * 16);
      m[v] = hi > lo ? static_cast<__mmask16>(((1u << (hi - lo)) - 1) << (lo - (p0 + v) * 16)) : 0;
    }
    const float* panel = bp + p0 * panel_floats;
    for (int64_t i = 0; i < num_rows; ++i) {
      const float* ti = t + rows[i] * t_stride;
      float* yi = y + rows[i] * y_stride + p0 * 16;
      __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
      for (int32_t k = 0; k < rank; ++k) {
        const __m512 tk = _mm512_set1_ps(ti[k]);
        for (int v = 0; v < 4; ++v) {
          acc[v] = _mm512_fmadd_ps(tk, _mm512_maskz_loadu_ps(m[v], panel + v * panel_floats + k * 16), acc[v]);
        }
      }
      for (int v = 0; v < 4; ++v) {
        const __m512 yv = _mm512_maskz_loadu_ps(m[v], yi + 16 * v);
        _mm512_mask_storeu_ps(yi + 16 * v, m[v], _mm512_add_ps(yv, _mm512_mul_ps(s, acc[v])));
      }
    }
  }
}

}  // namespace met::cpu::avx512
