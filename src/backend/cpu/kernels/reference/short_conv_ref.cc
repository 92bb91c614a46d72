// Reference short convolution + SiLU (see short_conv_ref.h): per channel,
// per row, the taps over the concatenation (state, x) plus the bias if any,
// then SiLU; then the state takes the concatenation's last d_conv - 1 rows.
// Threading: pure function. Tested by tests/backend/short_conv_test.cc.
#include "backend/cpu/kernels/reference/short_conv_ref.h"

#include <cmath>

namespace met::cpu::ref {

void short_conv_silu(const float* x, int64_t x_stride, int64_t rows, int64_t channels, int64_t c_begin,
                     int64_t c_end, const float* kernel, int32_t d_conv, float* state, float* out,
                     int64_t out_stride, const float* bias) {
  const int64_t keep = d_conv - 1;
  // Row `src` of the concatenation (state rows 0 .. keep-1, then x).
  auto input = [&](int64_t src, int64_t c) {
    return src < keep ? state[src * channels + c] : x[(src - keep) * x_stride + c];
  };
  for (int64_t c = c_begin; c < c_end; ++c) {
    for (int64_t r = 0; r < rows; ++r) {
      float y = 0.0f;
      for (int64_t w = 0; w < d_conv; ++w) y += input(r + w, c) * kernel[c * d_conv + w];
      if (bias != nullptr) y += bias[c];
      out[r * out_stride + c] = y / (1.0f + std::exp(-y));
    }
    // Ascending s reads rows + s >= s: never a slot already overwritten.
    for (int64_t s = 0; s < keep; ++s) state[s * channels + c] = input(rows + s, c);
  }
}

}  // namespace met::cpu::ref
