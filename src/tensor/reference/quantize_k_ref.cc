// Reference k-quant encoders: Q2_K, Q3_K, Q4_K, Q5_K and Q6_K (the scale search in
// k_quantizer.h over the scalar level kernels defined here) and Q8_K.
// The scalar level kernels fix the arithmetic the vector ones must reproduce:
// 8 accumulation lanes, fma, and the lane reduction order below.
// Threading: pure functions. Tested by tests/tensor/quantize_ref_test.cc.
#include <cmath>

#include "core/check.h"
#include "tensor/block_types.h"
#include "tensor/reference/k_quantizer.h"
#include "tensor/reference/reference_kernels.h"
#include "tensor/reference/rounding.h"

namespace met::ref {
namespace {

constexpr int kLanes = 8;

// The scalar level kernels (see k_quantizer.h for the contract).
struct ScalarLevelKernels {
  static LevelSums level_sums(const float* xs, const float* w, const float* wx, float iscale,
                              float lo, float hi, int n);
  static void quantize_levels(const float* x, float add, float d, float lo, float hi, int n,
                              uint8_t* out);
};

// ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)): the order of the usual
// AVX2 horizontal sum (high half onto low half, then movehl, then one add).
float reduce_lanes(const float* lanes) {
  return ((lanes[0] + lanes[4]) + (lanes[2] + lanes[6])) +
         ((lanes[1] + lanes[5]) + (lanes[3] + lanes[7]));
}

LevelSums ScalarLevelKernels::level_sums(const float* xs, const float* w, const float* wx,
                                         float iscale, float lo, float hi, int n) {
  MET_DCHECK(n % kLanes == 0);
  float acc_l[kLanes] = {};
  float acc_l2[kLanes] = {};
  float acc_xl[kLanes] = {};
  for (int i = 0; i < n; ++i) {
    const int lane = i % kLanes;
    const float l = round_code(iscale * xs[i], lo, hi);
    acc_l[lane] = std::fma(w[i], l, acc_l[lane]);
    acc_l2[lane] = std::fma(w[i] * l, l, acc_l2[lane]);
    acc_xl[lane] = std::fma(wx[i], l, acc_xl[lane]);
  }
  return {reduce_lanes(acc_l), reduce_lanes(acc_l2), reduce_lanes(acc_xl)};
}

void ScalarLevelKernels::quantize_levels(const float* x, float add, float d, float lo, float hi,
                                         int n, uint8_t* out) {
  for (int i = 0; i < n; ++i) {
    out[i] = static_cast<uint8_t>(round_code((x[i] + add) / d, lo, hi) - lo);
  }
}

}  // namespace

ScaleMinFit fit_q4_k_group(const float* x) { return search_q4_k_group<ScalarLevelKernels>(x); }

float fit_q6_k_group(const float* x) { return search_q6_k_group<ScalarLevelKernels>(x); }

void quantize_row_q2_k(const float* src, uint8_t* dst, int64_t num_elements) {
  MET_DCHECK(num_elements % kQkK == 0);
  quantize_row_q2_k_with<ScalarLevelKernels>(src, dst, num_elements);
}

void quantize_row_q3_k(const float* src, uint8_t* dst, int64_t num_elements) {
  MET_DCHECK(num_elements % kQkK == 0);
  quantize_row_q3_k_with<ScalarLevelKernels>(src, dst, num_elements);
}

void quantize_row_q4_k(const float* src, uint8_t* dst, int64_t num_elements) {
  MET_DCHECK(num_elements % kQkK == 0);
  quantize_row_q4_k_with<ScalarLevelKernels>(src, dst, num_elements);
}

void quantize_row_q5_k(const float* src, uint8_t* dst, int64_t num_elements) {
  MET_DCHECK(num_elements % kQkK == 0);
  quantize_row_q5_k_with<ScalarLevelKernels>(src, dst, num_elements);
}

void quantize_row_q6_k(const float* src, uint8_t* dst, int64_t num_elements) {
  MET_DCHECK(num_elements % kQkK == 0);
  quantize_row_q6_k_with<ScalarLevelKernels>(src, dst, num_elements);
}

void quantize_row_q8_k(const float* src, uint8_t* dst, int64_t num_elements) {
  MET_DCHECK(num_elements % kQkK == 0);
  auto* blocks = reinterpret_cast<BlockQ8_K*>(dst);
  for (int64_t b = 0; b < num_elements / kQkK; ++b, src += kQkK) {
    float amax = 0.0f;
    for (int j = 0; j < kQkK; ++j) {
      const float a = std::fabs(src[j]);
      amax = a > amax ? a : amax;
    }
    const float d = amax / 127.0f;
    const float inverse = d != 0.0f ? 1.0f / d : 0.0f;
    BlockQ8_K& block = blocks[b];
    block.d = d;
    for (int group = 0; group < kQkK / 16; ++group) {
      int sum = 0;
      for (int j = 16 * group; j < 16 * group + 16; ++j) {
        const auto q = static_cast<int8_t>(round_code(src[j] * inverse, -127.0f, 127.0f));
        block.qs[j] = q;
        sum += q;
      }
      block.bsums[group] = static_cast<int16_t>(sum);
    }
  }
}

}  // namespace met::ref
