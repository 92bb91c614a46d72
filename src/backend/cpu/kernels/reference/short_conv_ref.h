// Scalar reference of short_conv_silu (short_conv.h): the definition the
// vector tiers are checked against. y sums the taps in order w = 0 ..
// d_conv - 1 in float without contraction (ggml's order), then adds the
// bias if any; silu with std::exp.
// Threading: pure function. Tested by tests/backend/short_conv_test.cc.
#pragma once

#include <cstdint>

namespace met::cpu::ref {

void short_conv_silu(const float* x, int64_t x_stride, int64_t rows, int64_t channels, int64_t c_begin,
                     int64_t c_end, const float* kernel, int32_t d_conv, float* state, float* out,
                     int64_t out_stride, const float* bias);

}  // namespace met::cpu::ref
