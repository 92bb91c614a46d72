// MXFP4's E8M0 block scale as a float, halved to pair with kMxfp4Values
// (block_types.h), whose entries are the E2M1 values doubled:
//   e8m0_to_f32_half(e) = 2^(e - 128), exactly, for every byte e.
// e = 0 and 1 give the subnormals 2^-128 and 2^-127; e = 255 gives 2^127
// (ggml reads 255 as a scale too, not as the OCP spec's NaN).
// Threading: pure functions. Tested by tests/tensor/mxfp4_ref_test.cc.
#pragma once

#include <bit>
#include <cstdint>

namespace met {

constexpr float e8m0_to_f32_half(uint8_t e) {
  const uint32_t bits = e < 2 ? 0x00200000u << e : static_cast<uint32_t>(e - 1) << 23;
  return std::bit_cast<float>(bits);
}

}  // namespace met
