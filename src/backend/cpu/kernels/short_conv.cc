// short_conv.h's entry point: checks the contract and runs the selected
// tier's kernel (short_conv_kernels.h).
// Threading: pure function; the selected kernel is chosen once
// (function-local static). Tested by tests/backend/short_conv_test.cc.
#include "backend/cpu/kernels/short_conv.h"

#include "backend/cpu/kernels/reference/short_conv_ref.h"
#include "backend/cpu/kernels/short_conv_kernels.h"
#include "core/check.h"

namespace met::cpu {

ShortConvFn short_conv_kernel_for_isa(Isa isa) {
  switch (isa) {
    case Isa::kScalar:
      return ref::short_conv_silu;
    case Isa::kAvx2:
      return avx2::short_conv_silu;
    case Isa::kAvxVnni:
      return nullptr;  // AVX2's serves
    case Isa::kAvx512:
      return avx512::short_conv_silu;
    case Isa::kAmx:
      return nullptr;  // AVX-512's serves
  }
  return nullptr;
}

ShortConvFn selected_short_conv_kernel() {
  static const ShortConvFn kernel = [] {
    ShortConvFn out = ref::short_conv_silu;
    for (Isa tier : {Isa::kAvx2, Isa::kAvx512, Isa::kAmx}) {
      if (tier > selected_isa()) break;
      if (const ShortConvFn k = short_conv_kernel_for_isa(tier); k != nullptr) out = k;
    }
    return out;
  }();
  return kernel;
}

void short_conv_silu(const float* x, int64_t x_stride, int64_t rows, int64_t channels, int64_t c_begin,
                     int64_t c_end, const float* kernel, int32_t d_conv, float* state, float* out,
                     int64_t out_stride, const float* bias) {
  MET_CHECK(d_conv >= 1 && d_conv <= kMaxShortConvWidth, "short_conv_silu: d_conv {}", d_conv);
  MET_CHECK(0 <= c_begin && c_begin <= c_end && c_end <= channels, "short_conv_silu: channels [{}, {}) of {}",
            c_begin, c_end, channels);
  if (rows <= 0 || c_begin == c_end) return;
  selected_short_conv_kernel()(x, x_stride, rows, channels, c_begin, c_end, kernel, d_conv, state, out,
                               out_stride, bias);
}

}  // namespace met::cpu
