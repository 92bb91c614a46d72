// Reference gated delta rule pieces (see gated_delta_ref.h): plain float
// loops in the order the recurrence is written, no contraction, no
// vectorization (met_backend's flags for kernels/reference/).
// Threading: pure functions. Tested by tests/backend/gated_delta_test.cc.
#include "backend/cpu/kernels/reference/gated_delta_ref.h"

#include <algorithm>

namespace met::cpu::ref {

void gated_delta_step(const float* q, const float* k, const float* v, float decay, float beta, float scale,
                      int32_t head_dim, float* state, float* out) {
  const int64_t d = head_dim;
  for (int64_t x = 0; x < d * d; ++x) state[x] *= decay;
  for (int64_t j = 0; j < d; ++j) {
    float* row = state + j * d;  // S[.][j]
    float kv = 0.0f;
    for (int64_t i = 0; i < d; ++i) kv += row[i] * k[i];
    const float delta = beta * (v[j] - kv);
    for (int64_t i = 0; i < d; ++i) row[i] += k[i] * delta;
    float o = 0.0f;
    for (int64_t i = 0; i < d; ++i) o += row[i] * q[i];
    out[j] = scale * o;
  }
}

void gated_delta_gemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                      float* c, int64_t ldc, bool accumulate, bool lower) {
  for (int64_t r = 0; r < m; ++r) {
    const int64_t kend = lower ? std::min(k, r + 1) : k;
    for (int64_t col = 0; col < n; ++col) {
      double sum = accumulate ? c[r * ldc + col] : 0.0;
      for (int64_t x = 0; x < kend; ++x) sum += static_cast<double>(a[r * lda + x]) * b[x * ldb + col];
      c[r * ldc + col] = static_cast<float>(sum);
    }
  }
}

}  // namespace met::cpu::ref
