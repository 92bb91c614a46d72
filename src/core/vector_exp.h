// exp_avx2 and exp_avx512: e^x in vector lanes, one definition per ISA for
// every kernel that needs it (softmax, SwiGLU, attention, the sampler's
// passes). Both take Cephes expf's polynomial on r = x - n ln2 with
// n = round(x / ln2), so |r| <= ln2 / 2, and then apply 2^n.
// Accuracy (checked against std::exp by tests/core/vector_exp_test.cc):
//   - within 2e-7 relative wherever e^x is a normal float
//     (-87.33 <= x <= 88.37), and within 1e-5 up to 88.72;
//   - above 88.72: +inf; NaN stays NaN;
//   - exp_avx2 gives 0 below -87.33 (2^-126); exp_avx512 keeps the
//     subnormal results (vscalefps rounds once) down to -104, 0 below.
// Threading: pure functions. exp_avx512 carries its own target attribute, so
// it may be declared in a translation unit built for AVX2 (and called only
// where the CPU has AVX-512).
#pragma once

#include "core/avx512_intrinsics.h"

namespace met {

inline __m256 exp_avx2(__m256 x) {
  const __m256 lo = _mm256_set1_ps(-87.3365447504f);
  const __m256 hi = _mm256_set1_ps(88.7228391117f);
  const __m256 underflow = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
  const __m256 overflow = _mm256_cmp_ps(x, hi, _CMP_GT_OQ);
  x = _mm256_max_ps(lo, _mm256_min_ps(hi, x));  // constants first: NaN passes
  __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                             _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  n = _mm256_min_ps(_mm256_set1_ps(127.0f), n);  // 2^n stays a normal float
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i biased = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
  const __m256 scaled = _mm256_mul_ps(p, _mm256_castsi256_ps(_mm256_slli_epi32(biased, 23)));
  const __m256 result = _mm256_andnot_ps(underflow, scaled);
  return _mm256_blendv_ps(result, _mm256_set1_ps(__builtin_inff()), overflow);
}

__attribute__((target("avx512f"))) inline __m512 exp_avx512(__m512 x) {
  x = _mm512_max_ps(_mm512_set1_ps(-104.0f), _mm512_min_ps(_mm512_set1_ps(88.8f), x));  // NaN passes
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_scalef_ps(p, n);
}

}  // namespace met
