// Helpers for the tensor tests: seeded inputs, byte access to blocks, error
// measures. Test-only.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "gguf/ggml_type.h"
#include "testing/random_data.h"
#include "tensor/reference/reference_kernels.h"

namespace met::testing {

// FP16 bit patterns for hand-made block scales.
inline constexpr uint16_t kFp16One = 0x3C00;
inline constexpr uint16_t kFp16Half = 0x3800;     // 0.5
inline constexpr uint16_t kFp16Quarter = 0x3400;  // 0.25
inline constexpr uint16_t kFp16Two = 0x4000;      // 2.0
inline constexpr uint16_t kFp16MinusOne = 0xBC00;

inline size_t row_bytes(GgmlType type, size_t num_elements) {
  return static_cast<size_t>(ggml_row_bytes(type, num_elements).value());
}

// The bytes of any block struct, for building hand-made rows.
template <typename Block>
std::vector<uint8_t> bytes_of(const std::vector<Block>& blocks) {
  std::vector<uint8_t> out(blocks.size() * sizeof(Block));
  std::memcpy(out.data(), blocks.data(), out.size());
  return out;
}

template <typename Block>
Block zero_block() {
  Block block;
  std::memset(&block, 0, sizeof(block));
  return block;
}

inline std::vector<float> decode(ref::DequantizeRowFn fn, const std::vector<uint8_t>& src,
                                 size_t num_elements) {
  std::vector<float> out(num_elements);
  fn(src.data(), out.data(), static_cast<int64_t>(num_elements));
  return out;
}

inline std::vector<uint8_t> encode(ref::QuantizeRowFn fn, GgmlType type,
                                   const std::vector<float>& x) {
  std::vector<uint8_t> out(row_bytes(type, x.size()));
  fn(x.data(), out.data(), static_cast<int64_t>(x.size()));
  return out;
}

// RMS of (a - b) over RMS of a.
inline double relative_rms_error(const std::vector<float>& a, const std::vector<float>& b) {
  double err = 0.0;
  double ref = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    err += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    ref += static_cast<double>(a[i]) * a[i];
  }
  return std::sqrt(err / ref);
}

// Bit patterns, so NaNs compare equal to themselves.
inline std::vector<uint32_t> float_bits(const std::vector<float>& x) {
  std::vector<uint32_t> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = std::bit_cast<uint32_t>(x[i]);
  return out;
}

}  // namespace met::testing
