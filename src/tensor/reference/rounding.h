// How met's quantizers turn a scaled value into an integer code, written so
// scalar and vector code agree bit for bit: clamp first with the semantics of
// the SSE/AVX max/min instructions (a NaN operand yields the bound), then
// round half to even (std::nearbyint in the default rounding mode, which is
// what vroundps/vcvtps2dq do).
// Threading: pure functions. Tested through tests/tensor/quantize_ref_test.cc
// and isa_kernels_test.cc.
#pragma once

#include <cmath>

namespace met::ref {

// _mm_max_ps(v, lo) then _mm_min_ps(., hi).
inline float clamp_as_simd(float v, float lo, float hi) {
  v = v > lo ? v : lo;
  return v < hi ? v : hi;
}

// REQUIRES: lo <= hi are integers. The nearest integer to v in [lo, hi].
inline float round_code(float v, float lo, float hi) {
  return std::nearbyint(clamp_as_simd(v, lo, hi));
}

// The first of x[0 .. n) of largest magnitude, with its sign (0 when every
// value is 0 or NaN): what the symmetric quantizers map to their extreme code.
inline float signed_extreme(const float* x, int n) {
  float amax = 0.0f;
  float extreme = 0.0f;
  for (int i = 0; i < n; ++i) {
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      extreme = x[i];
    }
  }
  return extreme;
}

}  // namespace met::ref
