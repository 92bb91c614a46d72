// Reference encoders for F32, F16, BF16 and the 32-element families Q8_0,
// Q4_0, Q5_0, Q4_1 and Q5_1. One scale per block, chosen as ggml does: from
// the block's value of largest magnitude (Q8_0, Q4_0, Q5_0), or its range
// with the minimum as offset (Q4_1, Q5_1); codes are round-half-even of x
// times the inverse scale (reference/rounding.h), where ggml adds 0.5 and
// truncates. The AVX2 and AVX-512 versions of F16, BF16 and Q8_0
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
    const float d = signed_extreme(src, kQk) / -8.0f;
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

namespace {

// The fifth bits of a Q5 block's 32 codes, bit j for element j.
void pack_q5(const int* codes, uint8_t* qs, uint8_t* qh_bytes) {
  uint32_t qh = 0;
  for (int j = 0; j < kQk / 2; ++j) {
    qs[j] = static_cast<uint8_t>((codes[j] & 0x0F) | ((codes[j + kQk / 2] & 0x0F) << 4));
    qh |= static_cast<uint32_t>(codes[j] >> 4) << j;
    qh |= static_cast<uint32_t>(codes[j + kQk / 2] >> 4) << (j + kQk / 2);
  }
  std::memcpy(qh_bytes, &qh, sizeof(qh));
}

// A block's minimum and the step of `levels` codes over its range.
struct MinStep {
  float min;
  float d;
};
MinStep min_step(const float* x, float levels) {
  float lo = x[0], hi = x[0];
  for (int j = 1; j < kQk; ++j) {
    lo = x[j] < lo ? x[j] : lo;
    hi = x[j] > hi ? x[j] : hi;
  }
  return {lo, (hi - lo) / levels};
}

// Codes of (x - min) / d in 0..max_code.
void offset_codes(const float* x, MinStep s, float max_code, int* codes) {
  const float inverse = s.d != 0.0f ? 1.0f / s.d : 0.0f;
  for (int j = 0; j < kQk; ++j) codes[j] = static_cast<int>(round_code((x[j] - s.min) * inverse, 0.0f, max_code));
}

}  // namespace

void quantize_row_q5_0(const float* src, uint8_t* dst, int64_t num_elements) {
  MET_DCHECK(num_elements % kQk == 0);
  auto* blocks = reinterpret_cast<BlockQ5_0*>(dst);
  for (int64_t b = 0; b < num_elements / kQk; ++b, src += kQk) {
    // As Q4_0 with 32 levels: the extreme maps to code 0 (-16 d).
    const float d = signed_extreme(src, kQk) / -16.0f;
    const float inverse = d != 0.0f ? 1.0f / d : 0.0f;
    int codes[kQk];
    for (int j = 0; j < kQk; ++j) codes[j] = static_cast<int>(round_code(src[j] * inverse, -16.0f, 15.0f)) + 16;
    blocks[b].d = f32_to_fp16(d);
    pack_q5(codes, blocks[b].qs, blocks[b].qh);
  }
}

void quantize_row_q4_1(const float* src, uint8_t* dst, int64_t num_elements) {
  MET_DCHECK(num_elements % kQk == 0);
  auto* blocks = reinterpret_cast<BlockQ4_1*>(dst);
  for (int64_t b = 0; b < num_elements / kQk; ++b, src += kQk) {
    const MinStep s = min_step(src, 15.0f);
    int codes[kQk];
    offset_codes(src, s, 15.0f, codes);
    blocks[b].d = f32_to_fp16(s.d);
    blocks[b].m = f32_to_fp16(s.min);
    for (int j = 0; j < kQk / 2; ++j) blocks[b].qs[j] = static_cast<uint8_t>(codes[j] | (codes[j + kQk / 2] << 4));
  }
}

void quantize_row_q5_1(const float* src, uint8_t* dst, int64_t num_elements) {
  MET_DCHECK(num_elements % kQk == 0);
  auto* blocks = reinterpret_cast<BlockQ5_1*>(dst);
  for (int64_t b = 0; b < num_elements / kQk; ++b, src += kQk) {
    const MinStep s = min_step(src, 31.0f);
    int codes[kQk];
    offset_codes(src, s, 31.0f, codes);
    blocks[b].d = f32_to_fp16(s.d);
    blocks[b].m = f32_to_fp16(s.min);
    pack_q5(codes, blocks[b].qs, blocks[b].qh);
  }
}

}  // namespace met::ref
