// AVX2 + FMA short_conv_silu (short_conv_kernels.h): 8 channels per vector,
// vmaskmovps at the range's end. Per block of channels the d_conv taps are
// gathered once (kernel is d_conv-fastest), then every row sums its taps
// in order with separate multiply and add, then adds the bias if any: the
// reference's float operations, so y is bit for bit the reference's; silu uses
// core/vector_exp.h's exp_avx2 (within 2e-7 relative of std::exp; its 0
// below e^-87.3 leaves y / (1 + e^-y) = y, as std::exp's subnormal does).
// Built with -march=x86-64-v3: includes only intrinsics and declarations.
// Threading: pure function. Tested by tests/backend/short_conv_test.cc.
#include <immintrin.h>

#include "backend/cpu/kernels/short_conv.h"
#include "backend/cpu/kernels/short_conv_kernels.h"
#include "core/vector_exp.h"

namespace met::cpu::avx2 {
namespace {

__m256i conv_mask(int64_t remaining) {
  const int32_t r = remaining >= 8 ? 8 : static_cast<int32_t>(remaining < 0 ? 0 : remaining);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(r), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

}  // namespace

void short_conv_silu(const float* x, int64_t x_stride, int64_t rows, int64_t channels, int64_t c_begin,
                     int64_t c_end, const float* kernel, int32_t d_conv, float* state, float* out,
                     int64_t out_stride, const float* bias) {
  const int64_t keep = d_conv - 1;
  const __m256i lane_taps = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(d_conv));
  const __m256 one = _mm256_set1_ps(1.0f);
  __m256 taps[kMaxShortConvWidth];
  for (int64_t c = c_begin; c < c_end; c += 8) {
    const __m256i m = conv_mask(c_end - c);
    for (int64_t w = 0; w < d_conv; ++w) {
      taps[w] = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), kernel + c * d_conv + w, lane_taps,
                                         _mm256_castsi256_ps(m), 4);
    }
    const __m256 vbias = bias != nullptr ? _mm256_maskload_ps(bias + c, m) : _mm256_setzero_ps();
    // Row `src` of the concatenation (state, x) at channel c.
    auto input = [&](int64_t src) {
      const float* p = src < keep ? state + src * channels + c : x + (src - keep) * x_stride + c;
      return _mm256_maskload_ps(p, m);
    };
    for (int64_t r = 0; r < rows; ++r) {
      __m256 y = _mm256_setzero_ps();
      for (int64_t w = 0; w < d_conv; ++w) y = _mm256_add_ps(y, _mm256_mul_ps(input(r + w), taps[w]));
      if (bias != nullptr) y = _mm256_add_ps(y, vbias);
      const __m256 e = exp_avx2(_mm256_sub_ps(_mm256_setzero_ps(), y));
      _mm256_maskstore_ps(out + r * out_stride + c, m, _mm256_div_ps(y, _mm256_add_ps(one, e)));
    }
    for (int64_t s = 0; s < keep; ++s) _mm256_maskstore_ps(state + s * channels + c, m, input(rows + s));
  }
}

}  // namespace met::cpu::avx2
