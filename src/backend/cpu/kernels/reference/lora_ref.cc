// Scalar reference of the LoRA kernels (lora.h): the definition the vector
// tiers are checked against. Shrink sums a[k][c] · x[c] over c in order in
// float; expand sums t[k] · B[o][k] over k in order (B in panels), then
// adds scale times the sum to y.
// Threading: pure functions. Tested by tests/backend/lora_kernels_test.cc.
#include "backend/cpu/kernels/lora_kernels.h"
#include "backend/lora_adapter.h"

namespace met::cpu::ref {

void lora_shrink(const float* a, int32_t rank, int64_t cols, const float* x, int64_t x_stride, const int32_t* rows,
                 int64_t num_rows, float* t, int64_t t_stride) {
  for (int64_t i = 0; i < num_rows; ++i) {
    const float* xi = x + rows[i] * x_stride;
    float* ti = t + rows[i] * t_stride;
    for (int32_t k = 0; k < rank; ++k) {
      const float* ak = a + k * cols;
      float sum = 0.0f;
      for (int64_t c = 0; c < cols; ++c) sum += ak[c] * xi[c];
      ti[k] = sum;
    }
  }
}

void lora_expand(const float* bp, int32_t rank, int64_t /*out_cols*/, float scale, const float* t, int64_t t_stride,
                 const int32_t* rows, int64_t num_rows, float* y, int64_t y_stride, int64_t o_begin, int64_t o_end) {
  for (int64_t i = 0; i < num_rows; ++i) {
    const float* ti = t + rows[i] * t_stride;
    float* yi = y + rows[i] * y_stride;
    for (int64_t o = o_begin; o < o_end; ++o) {
      float sum = 0.0f;
      for (int32_t k = 0; k < rank; ++k) sum += ti[k] * bp[lora_panel_index(o, k, rank)];
      yi[o] += scale * sum;
    }
  }
}

}  // namespace met::cpu::ref
