// Reference IQ4_NL / IQ4_XS codec. Decoding is ggml's dequantize_row_iq4_nl
// / _xs term for term; encoding follows ggml's quantize_row_iq4_nl_impl as
// llama-quantize runs it without an importance matrix (ntry = 7): per group
// of 32, weights x^2, the scale of the best weighted fit over inverse scales
// (step + kIq4Values[0]) / max for step in -7..7, codes the nearest value
// (ties to the lower); IQ4_XS rounds each group scale to 6 bits against
// d = -max_scale / 32 and re-snaps the codes to the rounded scale.
// Threading: pure functions. Tested by tests/tensor/iq4_ref_test.cc.
#include <cmath>
#include <cstring>

#include "core/check.h"
#include "tensor/block_types.h"
#include "tensor/half.h"
#include "tensor/reference/reference_kernels.h"

namespace met::ref {
namespace {

constexpr float kIq4GroupMaxEps = 1e-15f;  // a group below this is all zeros
constexpr int kIq4TrySteps = 7;

// ggml's best_index_int8: the code whose value is nearest x.
uint8_t nearest_iq4_code(float x) {
  if (!(x > kIq4Values[0])) return 0;  // NaN goes to code 0
  if (x >= kIq4Values[15]) return 15;
  int lo = 0, hi = 15;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (x < kIq4Values[mid]) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  return static_cast<uint8_t>(x - kIq4Values[hi - 1] < kIq4Values[hi] - x ? hi - 1 : hi);
}

// The weighted least-squares scale of one group of 32 (0 for an all-zero one).
float fit_iq4_group(const float* x) {
  float weight[32];
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < 32; ++j) {
    weight[j] = x[j] * x[j];
    if (std::fabs(x[j]) > amax) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  if (!(amax >= kIq4GroupMaxEps)) return 0.0f;
  const auto sums = [&](float inverse, float& sum_qx, float& sum_q2) {
    sum_qx = 0.0f;
    sum_q2 = 0.0f;
    for (int j = 0; j < 32; ++j) {
      const float q = kIq4Values[nearest_iq4_code(inverse * x[j])];
      sum_qx += weight[j] * q * x[j];
      sum_q2 += weight[j] * q * q;
    }
  };
  float sum_qx = 0.0f, sum_q2 = 0.0f;
  sums(1.0f / (-max / kIq4Values[0]), sum_qx, sum_q2);
  float d = sum_q2 > 0.0f ? sum_qx / sum_q2 : 0.0f;
  float best = d * sum_qx;
  for (int step = -kIq4TrySteps; step <= kIq4TrySteps; ++step) {
    sums((static_cast<float>(step) + kIq4Values[0]) / max, sum_qx, sum_q2);
    if (sum_q2 > 0.0f && sum_qx * sum_qx > best * sum_q2) {
      d = sum_qx / sum_q2;
      best = d * sum_qx;
    }
  }
  return d;
}

// Codes of 32 values against scale d, packed as an IQ4_NL block's qs.
void pack_iq4_codes(const float* x, float d, uint8_t* qs) {
  const float inverse = d != 0.0f ? 1.0f / d : 0.0f;
  for (int j = 0; j < 16; ++j) {
    qs[j] = static_cast<uint8_t>(nearest_iq4_code(inverse * x[j]) | (nearest_iq4_code(inverse * x[j + 16]) << 4));
  }
}

int iq4_xs_group_scale(const BlockIq4Xs& block, int g) {
  return (((block.scales_l[g / 2] >> (4 * (g % 2))) & 0x0F) | (((block.scales_h >> (2 * g)) & 3) << 4)) - 32;
}

void decode_iq4_group(const uint8_t* qs, float d, float* dst) {
  for (int j = 0; j < 16; ++j) {
    dst[j] = d * kIq4Values[qs[j] & 0x0F];
    dst[j + 16] = d * kIq4Values[qs[j] >> 4];
  }
}

}  // namespace

void dequantize_row_iq4_nl(const uint8_t* src, float* dst, int64_t num_elements) {
  MET_DCHECK(num_elements % kQk == 0);
  const auto* blocks = reinterpret_cast<const BlockIq4Nl*>(src);
  for (int64_t b = 0; b < num_elements / kQk; ++b, dst += kQk) {
    decode_iq4_group(blocks[b].qs, fp16_to_f32(blocks[b].d), dst);
  }
}

void dequantize_row_iq4_xs(const uint8_t* src, float* dst, int64_t num_elements) {
  MET_DCHECK(num_elements % kQkK == 0);
  const auto* blocks = reinterpret_cast<const BlockIq4Xs*>(src);
  for (int64_t b = 0; b < num_elements / kQkK; ++b) {
    const float d = fp16_to_f32(blocks[b].d);
    for (int g = 0; g < 8; ++g, dst += 32) {
      decode_iq4_group(blocks[b].qs + 16 * g, d * static_cast<float>(iq4_xs_group_scale(blocks[b], g)), dst);
    }
  }
}

void quantize_row_iq4_nl(const float* src, uint8_t* dst, int64_t num_elements) {
  MET_DCHECK(num_elements % kQk == 0);
  auto* blocks = reinterpret_cast<BlockIq4Nl*>(dst);
  for (int64_t b = 0; b < num_elements / kQk; ++b, src += kQk) {
    const float d = fit_iq4_group(src);
    blocks[b].d = f32_to_fp16(d);
    pack_iq4_codes(src, d, blocks[b].qs);
  }
}

void quantize_row_iq4_xs(const float* src, uint8_t* dst, int64_t num_elements) {
  MET_DCHECK(num_elements % kQkK == 0);
  auto* blocks = reinterpret_cast<BlockIq4Xs*>(dst);
  for (int64_t b = 0; b < num_elements / kQkK; ++b, src += kQkK) {
    float scales[8];
    float max_scale = 0.0f, amax_scale = 0.0f;
    for (int g = 0; g < 8; ++g) {
      scales[g] = fit_iq4_group(src + 32 * g);
      if (std::fabs(scales[g]) > amax_scale) {
        amax_scale = std::fabs(scales[g]);
        max_scale = scales[g];
      }
    }
    BlockIq4Xs& block = blocks[b];
    std::memset(&block, 0, sizeof(block));
    const float d = -max_scale / 32.0f;
    block.d = f32_to_fp16(d);
    const float inverse = d != 0.0f ? 1.0f / d : 0.0f;
    for (int g = 0; g < 8; ++g) {
      const float scaled = std::nearbyint(inverse * scales[g]);
      const int l = !(scaled >= -32.0f) ? -32 : scaled > 31.0f ? 31 : static_cast<int>(scaled);  // NaN: -32
      pack_iq4_codes(src + 32 * g, d * static_cast<float>(l), block.qs + 16 * g);
      const int stored = l + 32;
      block.scales_l[g / 2] = static_cast<uint8_t>(block.scales_l[g / 2] | ((stored & 0x0F) << (4 * (g % 2))));
      block.scales_h = static_cast<uint16_t>(block.scales_h | ((stored >> 4) << (2 * g)));
    }
  }
}

}  // namespace met::ref
