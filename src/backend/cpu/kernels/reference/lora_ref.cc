// Scalar reference of the LoRA kernels (lora.h): the definition the vector
// tiers are checked against. Shrink sums a[k][c] · x[c] over c in order in
// float; expand sums t[k] · B[o][k] over k in order (B in panels), then
// adds scale times the sum to y.
// Threading: pure functions. Tested by tests/backend/lora_kernels_test.cc.
#include "backend/cpu/kernels/lora_kernels.h"
#include "backend/lora_adapter.h"
#include "tensor/half.h"

namespace met::cpu::ref {
namespace {

float at(const void* m, bool f16, int64_t i) {
  return f16 ? fp16_to_f32(static_cast<const uint16_t*>(m)[i]) : static_cast<const float*>(m)[i];
}

}  // namespace

void lora_shrink(const void* a, bool f16, int32_t rank, int64_t cols, const float* x, int64_t x_stride, const int32_t* rows,
                 int64_t num_rows, float* t, int64_t t_stride) {
  for (int64_t i = 0; i < num_rows; ++i) {
    const float* xi = x + rows[i] * x_stride;
    float* ti = t + rows[i] * t_stride;
    for (int32_t k = 0; k < rank; ++k) {
      float sum = 0.0f;
      for (int64_t c = 0; c < cols; ++c) sum += at(a, f16, k * cols + c) * xi[c];
      ti[k] = sum;
    }
  }
}

void lora_expand(const void* bp, bool f16, int32_t rank, int64_t /*out_cols*/, float scale, const float* t, int64_t t_stride,
                 const int32_t* rows, int64_t num_rows, float* y, int64_t y_stride, int64_t o_begin, int64_t o_end) {
  for (int64_t i = 0; i < num_rows; ++i) {
    const float* ti = t + rows[i] * t_stride;
    float* yi = y + rows[i] * y_stride;
    for (int64_t o = o_begin; o < o_end; ++o) {
      float sum = 0.0f;
      for (int32_t k = 0; k < rank; ++k) sum += ti[k] * at(bp, f16, lora_panel_index(o, k, rank));
      yi[o] += scale * sum;
    }
  }
}

}  // namespace met::cpu::ref
