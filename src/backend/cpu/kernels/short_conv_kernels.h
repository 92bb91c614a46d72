// The per-ISA short_conv_silu kernels behind short_conv.h and the one this
// process runs (chosen once from selected_isa()). Plain declarations only,
// so the wider-ISA translation units include no header with inline code.
// Threading: pure functions. Tested by tests/backend/short_conv_test.cc.
#pragma once

#include <cstdint>

#include "core/cpu_features.h"

namespace met::cpu {

// short_conv_silu's contract (short_conv.h), checked by the caller.
using ShortConvFn = void (*)(const float* x, int64_t x_stride, int64_t rows, int64_t channels, int64_t c_begin,
                             int64_t c_end, const float* kernel, int32_t d_conv, float* state, float* out,
                             int64_t out_stride, const float* bias);

namespace avx2 {  // short_conv_avx2.cc
void short_conv_silu(const float* x, int64_t x_stride, int64_t rows, int64_t channels, int64_t c_begin,
                     int64_t c_end, const float* kernel, int32_t d_conv, float* state, float* out,
                     int64_t out_stride, const float* bias);
}  // namespace avx2

namespace avx512 {  // short_conv_avx512.cc
void short_conv_silu(const float* x, int64_t x_stride, int64_t rows, int64_t channels, int64_t c_begin,
                     int64_t c_end, const float* kernel, int32_t d_conv, float* state, float* out,
                     int64_t out_stride, const float* bias);
}  // namespace avx512

// The kernel `isa` itself provides (kScalar: the reference), or null.
// Calling a tier the CPU lacks is a crash.
ShortConvFn short_conv_kernel_for_isa(Isa isa);
// What short_conv.h runs: the highest tier at or below selected_isa().
ShortConvFn selected_short_conv_kernel();

}  // namespace met::cpu
