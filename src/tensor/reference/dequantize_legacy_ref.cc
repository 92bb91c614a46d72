// Reference decoders for the float types and the 32-element block families
// (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0), following ggml's definitions term for term:
// the float operations and their order match ggml's scalar code, so results
// are bit-identical to it (without FMA contraction; met_tensor builds with
// -ffp-contract=off).
// Threading: pure functions. Tested by tests/tensor/dequantize_legacy_ref_test.cc.
#include <cstring>

#include "core/check.h"
#include "tensor/block_types.h"
#include "tensor/half.h"
#include "tensor/reference/reference_kernels.h"

namespace met::ref {
namespace {

uint16_t load_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

uint32_t load_qh(const uint8_t* qh) {
  uint32_t v;
  std::memcpy(&v, qh, sizeof(v));
  return v;
}

// The 5-bit codes of a Q5 block: low nibbles from qs, bit 4 from qh.
void unpack_q5_codes(const uint8_t* qs, const uint8_t* qh_bytes, int* codes) {
  const uint32_t qh = load_qh(qh_bytes);
  for (int j = 0; j < kQk / 2; ++j) {
    codes[j] = static_cast<int>((qs[j] & 0x0F) | (((qh >> j) & 1u) << 4));
    codes[j + kQk / 2] = static_cast<int>((qs[j] >> 4) | (((qh >> (j + kQk / 2)) & 1u) << 4));
  }
}

}  // namespace

void dequantize_row_f32(const uint8_t* src, float* dst, int64_t num_elements) {
  std::memcpy(dst, src, static_cast<size_t>(num_elements) * sizeof(float));
}

void dequantize_row_f16(const uint8_t* src, float* dst, int64_t num_elements) {
  for (int64_t i = 0; i < num_elements; ++i) dst[i] = fp16_to_f32(load_u16(src + 2 * i));
}

void dequantize_row_bf16(const uint8_t* src, float* dst, int64_t num_elements) {
  for (int64_t i = 0; i < num_elements; ++i) dst[i] = bf16_to_f32(load_u16(src + 2 * i));
}

void dequantize_row_q4_0(const uint8_t* src, float* dst, int64_t num_elements) {
  MET_DCHECK(num_elements % kQk == 0);
  const auto* blocks = reinterpret_cast<const BlockQ4_0*>(src);
  for (int64_t b = 0; b < num_elements / kQk; ++b, dst += kQk) {
    const BlockQ4_0& block = blocks[b];
    const float d = fp16_to_f32(block.d);
    for (int j = 0; j < kQk / 2; ++j) {
      dst[j] = static_cast<float>((block.qs[j] & 0x0F) - 8) * d;
      dst[j + kQk / 2] = static_cast<float>((block.qs[j] >> 4) - 8) * d;
    }
  }
}

void dequantize_row_q4_1(const uint8_t* src, float* dst, int64_t num_elements) {
  MET_DCHECK(num_elements % kQk == 0);
  const auto* blocks = reinterpret_cast<const BlockQ4_1*>(src);
  for (int64_t b = 0; b < num_elements / kQk; ++b, dst += kQk) {
    const BlockQ4_1& block = blocks[b];
    const float d = fp16_to_f32(block.d);
    const float m = fp16_to_f32(block.m);
    for (int j = 0; j < kQk / 2; ++j) {
      dst[j] = static_cast<float>(block.qs[j] & 0x0F) * d + m;
      dst[j + kQk / 2] = static_cast<float>(block.qs[j] >> 4) * d + m;
    }
  }
}

void dequantize_row_q5_0(const uint8_t* src, float* dst, int64_t num_elements) {
  MET_DCHECK(num_elements % kQk == 0);
  const auto* blocks = reinterpret_cast<const BlockQ5_0*>(src);
  int codes[kQk];
  for (int64_t b = 0; b < num_elements / kQk; ++b, dst += kQk) {
    const BlockQ5_0& block = blocks[b];
    const float d = fp16_to_f32(block.d);
    unpack_q5_codes(block.qs, block.qh, codes);
    for (int j = 0; j < kQk; ++j) dst[j] = static_cast<float>(codes[j] - 16) * d;
  }
}

void dequantize_row_q5_1(const uint8_t* src, float* dst, int64_t num_elements) {
  MET_DCHECK(num_elements % kQk == 0);
  const auto* blocks = reinterpret_cast<const BlockQ5_1*>(src);
  int codes[kQk];
  for (int64_t b = 0; b < num_elements / kQk; ++b, dst += kQk) {
    const BlockQ5_1& block = blocks[b];
    const float d = fp16_to_f32(block.d);
    const float m = fp16_to_f32(block.m);
    unpack_q5_codes(block.qs, block.qh, codes);
    for (int j = 0; j < kQk; ++j) dst[j] = static_cast<float>(codes[j]) * d + m;
  }
}

void dequantize_row_q8_0(const uint8_t* src, float* dst, int64_t num_elements) {
  MET_DCHECK(num_elements % kQk == 0);
  const auto* blocks = reinterpret_cast<const BlockQ8_0*>(src);
  for (int64_t b = 0; b < num_elements / kQk; ++b, dst += kQk) {
    const BlockQ8_0& block = blocks[b];
    const float d = fp16_to_f32(block.d);
    for (int j = 0; j < kQk; ++j) dst[j] = static_cast<float>(block.qs[j]) * d;
  }
}

}  // namespace met::ref
