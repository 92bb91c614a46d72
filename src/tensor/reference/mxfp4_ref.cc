// Reference MXFP4 codec, byte for byte what ggml's dequantize_row_mxfp4 and
// quantize_row_mxfp4_ref produce (their float operations, in their order):
//   e = floor(log2(amax)) - 2 + 127 (0 for an all-zero block), so the scale
//       2^(e - 127) puts amax in [4, 8) units: values above 6 units clip to 6;
//   each code is the first of the 16 with the least |value - x| (ties go to
//       the lower code: +0 over -0, the smaller magnitude between two steps).
// Below amax = 2^-125 ggml's exponent goes negative (an undefined conversion
// to uint8); met clamps it to 0, the smallest scale.
// Threading: pure functions. Tested by tests/tensor/mxfp4_ref_test.cc.
#include <algorithm>
#include <cmath>

#include "core/check.h"
#include "tensor/block_types.h"
#include "tensor/mxfp4.h"
#include "tensor/reference/reference_kernels.h"

namespace met::ref {
namespace {

uint8_t mxfp4_exponent(float amax) {
  if (!(amax > 0.0f)) return 0;
  const float e = std::floor(std::log2(amax)) - 2.0f + 127.0f;
  return static_cast<uint8_t>(std::clamp(e, 0.0f, 255.0f));
}

uint8_t nearest_mxfp4_code(float x, float d) {
  int best = 0;
  float best_error = std::fabs(static_cast<float>(kMxfp4Values[0]) * d - x);
  for (int code = 1; code < 16; ++code) {
    const float error = std::fabs(static_cast<float>(kMxfp4Values[code]) * d - x);
    if (error < best_error) {
      best = code;
      best_error = error;
    }
  }
  return static_cast<uint8_t>(best);
}

}  // namespace

void dequantize_row_mxfp4(const uint8_t* src, float* dst, int64_t num_elements) {
  MET_DCHECK(num_elements % kQk == 0);
  const auto* blocks = reinterpret_cast<const BlockMxfp4*>(src);
  for (int64_t b = 0; b < num_elements / kQk; ++b, dst += kQk) {
    const BlockMxfp4& block = blocks[b];
    const float d = e8m0_to_f32_half(block.e);
    for (int j = 0; j < kQk / 2; ++j) {
      dst[j] = static_cast<float>(kMxfp4Values[block.qs[j] & 0x0F]) * d;
      dst[j + kQk / 2] = static_cast<float>(kMxfp4Values[block.qs[j] >> 4]) * d;
    }
  }
}

void quantize_row_mxfp4(const float* src, uint8_t* dst, int64_t num_elements) {
  MET_DCHECK(num_elements % kQk == 0);
  auto* blocks = reinterpret_cast<BlockMxfp4*>(dst);
  for (int64_t b = 0; b < num_elements / kQk; ++b, src += kQk) {
    float amax = 0.0f;
    for (int j = 0; j < kQk; ++j) amax = std::max(amax, std::fabs(src[j]));
    BlockMxfp4& block = blocks[b];
    block.e = mxfp4_exponent(amax);
    const float d = e8m0_to_f32_half(block.e);
    for (int j = 0; j < kQk / 2; ++j) {
      const uint8_t low = nearest_mxfp4_code(src[j], d);
      const uint8_t high = nearest_mxfp4_code(src[j + kQk / 2], d);
      block.qs[j] = static_cast<uint8_t>(low | (high << 4));
    }
  }
}

}  // namespace met::ref
