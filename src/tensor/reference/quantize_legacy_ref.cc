// Reference encoders for F32, F16, BF16 and the 32-element families Q8_0 and
// Q4_0. One scale per block, chosen from the block's largest magnitude (as
// ggml does); codes are round-half-even of x times the inverse scale
// (reference/rounding.h). The AVX2 and AVX-512 versions of F16, BF16 and Q8_0
// reproduce these bit for bit.
// Threading: pure functions. Tested by tests/tensor/quantize_ref_test.cc.
#include <cmath>
#include <cstring>

#include "core/check.h"
#include "tensor/block_types.h"
#include "tensor/half.h"
#include "tensor/reference/reference_kernels.h"
#include "tensor/reference/rounding.h"

namespace met::ref {
namespace {

void store_u16(uint8_t* p, uint16_t v) { std::memcpy(p, &v, sizeof(v)); }

// The largest |x|, ignoring NaN (the order of _mm_max_ps(|x|, acc)).
float max_abs(const float* x, int n) {
  float amax = 0.0f;
  for (int i = 0; i < n; ++i) {
    const float a = std::fabs(x[i]);
    amax = a > amax ? a : amax;
  }
  return amax;
}

}  // namespace

void quantize_row_f32(const float* src, uint8_t* dst, int64_t num_elements) {
  std::memcpy(dst, src, static_cast<size_t>(num_elements) * sizeof(float));
}

void quantize_row_f16(const float* src, uint8_t* dst, int64_t num_elements) {
  for (int64_t i = 0; i < num_elements; ++i) store_u16(dst + 2 * i, f32_to_fp16(src[i]));
}

void quantize_row_bf16(const float* src, uint8_t* dst, int64_t num_elements) {
  for (int64_t i = 0; i < num_elements; ++i) store_u16(dst + 2 * i, f32_to_bf16(src[i]));
}

void quantize_row_q8_0(const float* src, uint8_t* dst, int64_t num_elements) {
  MET_DCHECK(num_elements % kQk == 0);
  auto* blocks = reinterpret_cast<BlockQ8_0*>(dst);
  for (int64_t b = 0; b < num_elements / kQk; ++b, src += kQk) {
    const float d = max_abs(src, kQk) / 127.0f;
    const float inverse = d != 0.0f ? 1.0f / d : 0.0f;
    BlockQ8_0& block = blocks[b];
    block.d = f32_to_fp16(d);
    for (int j = 0; j < kQk; ++j) {
      block.qs[j] = static_cast<int8_t>(round_code(src[j] * inverse, -127.0f, 127.0f));
    }
  }
}

void quantize_row_q4_0(const float* src, uint8_t* dst, int64_t num_elements) {
  MET_DCHECK(num_elements % kQk == 0);
  auto* blocks = reinterpret_cast<BlockQ4_0*>(dst);
  for (int64_t b = 0; b < num_elements / kQk; ++b, src += kQk) {
    // The signed value of largest magnitude maps to code 0 (-8 d); the
    // opposite extreme clamps to code 15 (+7 d).
    float amax = 0.0f;
    float extreme = 0.0f;
    for (int j = 0; j < kQk; ++j) {
      if (std::fabs(src[j]) > amax) {
        amax = std::fabs(src[j]);
        extreme = src[j];
      }
    }
    const float d = extreme / -8.0f;
    const float inverse = d != 0.0f ? 1.0f / d : 0.0f;
    BlockQ4_0& block = blocks[b];
    block.d = f32_to_fp16(d);
    for (int j = 0; j < kQk / 2; ++j) {
      const auto low = static_cast<int>(round_code(src[j] * inverse, -8.0f, 7.0f)) + 8;
      const auto high = static_cast<int>(round_code(src[j + kQk / 2] * inverse, -8.0f, 7.0f)) + 8;
      block.qs[j] = static_cast<uint8_t>(low | (high << 4));
    }
  }
}

}  // namespace met::ref
