// Reference selective scan block (see ssm_scan_ref.h): plain float loops in
// the order ggml_ssm_scan writes them, no contraction, no vectorization
// (met_backend's flags for kernels/reference/).
// Threading: pure function. Tested by tests/backend/ssm_scan_test.cc.
#include "backend/cpu/kernels/reference/ssm_scan_ref.h"

namespace met::cpu::ref {

void ssm_scan_block(const SsmScanBlock& block, int32_t head_dim, int32_t d_state, float* state) {
  for (int64_t t = 0; t < block.num_rows; ++t) {
    const float* x = block.x + t * block.x_stride;
    const float* b = block.b + t * block.b_stride;
    const float* c = block.c + t * block.c_stride;
    float* y = block.y + t * block.y_stride;
    const float decay = block.decay[t];
    for (int64_t p = 0; p < head_dim; ++p) {
      float* row = state + p * d_state;
      const float x_dt = x[p] * block.dt[t];
      float sum = 0.0f;
      for (int64_t n = 0; n < d_state; ++n) {
        row[n] = row[n] * decay + b[n] * x_dt;
        sum += row[n] * c[n];
      }
      y[p] = sum + block.d * x[p];
    }
  }
}

}  // namespace met::cpu::ref
