// AVX2 level kernels for the K-quant encoders in
// reference/k_quantizer.h: the candidate evaluation of the scale search and
// the final snap to codes, 8 floats per vector. They reproduce
// ScalarLevelKernels (reference/quantize_k_ref.cc) bit for bit: lane k of
// each accumulator sums the terms k, k + 8, ... with fma, the horizontal sum
// uses the reference's lane order, clamps are _mm256_max_ps/_mm256_min_ps as
// clamp_as_simd describes, and rounding is to nearest even.
// Built with the baseline flags (-march=x86-64-v3): it instantiates the
// shared templates and inline helpers, which must compile to the same code
// as in the reference's translation unit.
// Threading: pure functions. Tested by tests/tensor/isa_kernels_test.cc.
#include <immintrin.h>

#include "tensor/isa_kernels.h"
#include "tensor/reference/k_quantizer.h"

namespace met::avx2 {
namespace {

constexpr int kRoundEven = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

// ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)), as reduce_lanes.
float horizontal_sum(__m256 v) {
  const __m128 halves = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 pairs = _mm_add_ps(halves, _mm_movehl_ps(halves, halves));
  return _mm_cvtss_f32(_mm_add_ss(pairs, _mm_movehdup_ps(pairs)));
}

struct Avx2LevelKernels {
  static ref::LevelSums level_sums(const float* xs, const float* w, const float* wx, float iscale,
                                   float lo, float hi, int n) {
    const __m256 scale = _mm256_set1_ps(iscale);
    const __m256 low = _mm256_set1_ps(lo);
    const __m256 high = _mm256_set1_ps(hi);
    __m256 acc_l = _mm256_setzero_ps();
    __m256 acc_l2 = _mm256_setzero_ps();
    __m256 acc_xl = _mm256_setzero_ps();
    for (int i = 0; i < n; i += 8) {
      __m256 v = _mm256_mul_ps(scale, _mm256_loadu_ps(xs + i));
      v = _mm256_min_ps(_mm256_max_ps(v, low), high);
      const __m256 l = _mm256_round_ps(v, kRoundEven);
      const __m256 weight = _mm256_loadu_ps(w + i);
      acc_l = _mm256_fmadd_ps(weight, l, acc_l);
      acc_l2 = _mm256_fmadd_ps(_mm256_mul_ps(weight, l), l, acc_l2);
      acc_xl = _mm256_fmadd_ps(_mm256_loadu_ps(wx + i), l, acc_xl);
    }
    return {horizontal_sum(acc_l), horizontal_sum(acc_l2), horizontal_sum(acc_xl)};
  }

  static void quantize_levels(const float* x, float add, float d, float lo, float hi, int n,
                              uint8_t* out) {
    const __m256 offset = _mm256_set1_ps(add);
    const __m256 divisor = _mm256_set1_ps(d);
    const __m256 low = _mm256_set1_ps(lo);
    const __m256 high = _mm256_set1_ps(hi);
    for (int i = 0; i < n; i += 8) {
      __m256 v = _mm256_div_ps(_mm256_add_ps(_mm256_loadu_ps(x + i), offset), divisor);
      v = _mm256_min_ps(_mm256_max_ps(v, low), high);
      const __m256 code = _mm256_sub_ps(_mm256_round_ps(v, kRoundEven), low);
      const __m256i code32 = _mm256_cvttps_epi32(code);  // exact: 0..63
      const __m128i code16 =
          _mm_packs_epi32(_mm256_castsi256_si128(code32), _mm256_extracti128_si256(code32, 1));
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out + i), _mm_packus_epi16(code16, code16));
    }
  }
};

}  // namespace

ref::ScaleMinFit fit_q4_k_group(const float* x) {
  return ref::search_q4_k_group<Avx2LevelKernels>(x);
}

float fit_q6_k_group(const float* x) { return ref::search_q6_k_group<Avx2LevelKernels>(x); }

void quantize_row_q2_k(const float* src, uint8_t* dst, int64_t num_elements) {
  ref::quantize_row_q2_k_with<Avx2LevelKernels>(src, dst, num_elements);
}

void quantize_row_q3_k(const float* src, uint8_t* dst, int64_t num_elements) {
  ref::quantize_row_q3_k_with<Avx2LevelKernels>(src, dst, num_elements);
}

void quantize_row_q4_k(const float* src, uint8_t* dst, int64_t num_elements) {
  ref::quantize_row_q4_k_with<Avx2LevelKernels>(src, dst, num_elements);
}

void quantize_row_q5_k(const float* src, uint8_t* dst, int64_t num_elements) {
  ref::quantize_row_q5_k_with<Avx2LevelKernels>(src, dst, num_elements);
}

void quantize_row_q6_k(const float* src, uint8_t* dst, int64_t num_elements) {
  ref::quantize_row_q6_k_with<Avx2LevelKernels>(src, dst, num_elements);
}

}  // namespace met::avx2
