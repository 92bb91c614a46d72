// AVX-512 short_conv_silu (short_conv_kernels.h): 16 channels per vector,
// masked at the range's end. Per block of channels the d_conv taps are
// gathered once (kernel is d_conv-fastest), then every row sums its taps
// in order with separate multiply and add, then adds the bias if any: the
// reference's float operations, so y is bit for bit the reference's; silu uses
// core/vector_exp.h's exp_avx512 (within 2e-7 relative of std::exp).
// core/avx512_intrinsics.h includes the intrinsics (GCC 12's headers warn).
// Threading: pure function. Tested by tests/backend/short_conv_test.cc.
#include "core/avx512_intrinsics.h"

#include "backend/cpu/kernels/short_conv.h"
#include "backend/cpu/kernels/short_conv_kernels.h"
#include "core/vector_exp.h"

namespace met::cpu::avx512 {
namespace {

__mmask16 conv_mask(int64_t remaining) {
  if (remaining <= 0) return 0;
  return remaining >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << remaining) - 1);
}

}  // namespace

void short_conv_silu(const float* x, int64_t x_stride, int64_t rows, int64_t channels, int64_t c_begin,
                     int64_t c_end, const float* kernel, int32_t d_conv, float* state, float* out,
                     int64_t out_stride, const float* bias) {
  const int64_t keep = d_conv - 1;
  const __m512i lane_taps = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                               _mm512_set1_epi32(d_conv));
  const __m512 one = _mm512_set1_ps(1.0f);
  __m512 taps[kMaxShortConvWidth];
  for (int64_t c = c_begin; c < c_end; c += 16) {
    const __mmask16 m = conv_mask(c_end - c);
    for (int64_t w = 0; w < d_conv; ++w) {
      taps[w] = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, lane_taps, kernel + c * d_conv + w, 4);
    }
    const __m512 vbias = bias != nullptr ? _mm512_maskz_loadu_ps(m, bias + c) : _mm512_setzero_ps();
    // Row `src` of the concatenation (state, x) at channel c.
    auto input = [&](int64_t src) {
      const float* p = src < keep ? state + src * channels + c : x + (src - keep) * x_stride + c;
      return _mm512_maskz_loadu_ps(m, p);
    };
    for (int64_t r = 0; r < rows; ++r) {
      __m512 y = _mm512_setzero_ps();
      for (int64_t w = 0; w < d_conv; ++w) y = _mm512_add_ps(y, _mm512_mul_ps(input(r + w), taps[w]));
      if (bias != nullptr) y = _mm512_add_ps(y, vbias);
      const __m512 e = exp_avx512(_mm512_sub_ps(_mm512_setzero_ps(), y));
      _mm512_mask_storeu_ps(out + r * out_stride + c, m, _mm512_div_ps(y, _mm512_add_ps(one, e)));
    }
    for (int64_t s = 0; s < keep; ++s) _mm512_mask_storeu_ps(state + s * channels + c, m, input(rows + s));
  }
}

}  // namespace met::cpu::avx512
