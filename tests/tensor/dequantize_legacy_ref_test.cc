// Tests for reference/dequantize_legacy_ref.cc: hand-built blocks decode to
// the values the format defines, spelled out in each test (literals worked
// out by hand, plus the definition applied element by element).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "tensor/block_types.h"
#include "tensor/reference/reference_kernels.h"
#include "tensor_testing.h"

namespace met {
namespace {

using testing::bytes_of;
using testing::decode;
using testing::zero_block;
using testing::kFp16Half;
using testing::kFp16Quarter;
using testing::kFp16Two;
using testing::kFp16MinusOne;


TEST(DequantizeF32, CopiesTheFloats) {
  const std::vector<float> x = {1.5f, -0.0f, 3e38f};
  std::vector<uint8_t> bytes(x.size() * 4);
  std::memcpy(bytes.data(), x.data(), bytes.size());
  EXPECT_EQ(testing::float_bits(decode(ref::dequantize_row_f32, bytes, 3)), testing::float_bits(x));
}

TEST(DequantizeF16, DecodesLittleEndianHalves) {
  const std::vector<uint8_t> bytes = {0x00, 0x3C, 0x00, 0xC0, 0x01, 0x00, 0xFF, 0x7B};
  const std::vector<float> out = decode(ref::dequantize_row_f16, bytes, 4);
  EXPECT_EQ(out, (std::vector<float>{1.0f, -2.0f, 5.9604645e-08f, 65504.0f}));
}

TEST(DequantizeBf16, DecodesLittleEndianBfloats) {
  const std::vector<uint8_t> bytes = {0x80, 0x3F, 0x40, 0xC0, 0x80, 0x7F};
  const std::vector<float> out = decode(ref::dequantize_row_bf16, bytes, 3);
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], -3.0f);
  EXPECT_TRUE(std::isinf(out[2]));
}

TEST(DequantizeQ4_0, SubtractsEightAndScalesByD) {
  auto block = zero_block<BlockQ4_0>();
  block.d = kFp16Half;
  // Element j < 16 is the low nibble of qs[j] (here j), element j + 16 the high
  // nibble (here 15 - j).
  for (int j = 0; j < 16; ++j) block.qs[j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  const std::vector<float> out = decode(ref::dequantize_row_q4_0, bytes_of<BlockQ4_0>({block}), 32);
  EXPECT_EQ(out[0], -4.0f);   // (0 - 8) * 0.5
  EXPECT_EQ(out[8], 0.0f);    // (8 - 8) * 0.5
  EXPECT_EQ(out[15], 3.5f);   // (15 - 8) * 0.5
  EXPECT_EQ(out[16], 3.5f);   // high nibble 15
  EXPECT_EQ(out[31], -4.0f);  // high nibble 0
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(out[j], (j - 8) * 0.5f) << j;
    EXPECT_EQ(out[j + 16], (15 - j - 8) * 0.5f) << j;
  }
}

TEST(DequantizeQ4_0, DecodesEachBlockWithItsOwnScale) {
  auto first = zero_block<BlockQ4_0>();
  auto second = zero_block<BlockQ4_0>();
  first.d = kFp16Half;
  second.d = kFp16Two;
  for (int j = 0; j < 16; ++j) first.qs[j] = second.qs[j] = 0x9A;  // low 10, high 9
  const std::vector<float> out =
      decode(ref::dequantize_row_q4_0, bytes_of<BlockQ4_0>({first, second}), 64);
  EXPECT_EQ(out[0], 1.0f);   // (10 - 8) * 0.5
  EXPECT_EQ(out[16], 0.5f);  // (9 - 8) * 0.5
  EXPECT_EQ(out[32], 4.0f);  // (10 - 8) * 2
  EXPECT_EQ(out[63], 2.0f);  // (9 - 8) * 2
}

TEST(DequantizeQ4_1, ScalesAndAddsTheMin) {
  auto block = zero_block<BlockQ4_1>();
  block.d = kFp16Quarter;
  block.m = kFp16MinusOne;
  for (int j = 0; j < 16; ++j) block.qs[j] = static_cast<uint8_t>(j | (((3 * j) % 16) << 4));
  const std::vector<float> out = decode(ref::dequantize_row_q4_1, bytes_of<BlockQ4_1>({block}), 32);
  EXPECT_EQ(out[0], -1.0f);    // 0 * 0.25 - 1
  EXPECT_EQ(out[15], 2.75f);   // 15 * 0.25 - 1
  EXPECT_EQ(out[17], -0.25f);  // high nibble of qs[1] is 3: 3 * 0.25 - 1
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(out[j], j * 0.25f - 1.0f) << j;
    EXPECT_EQ(out[j + 16], ((3 * j) % 16) * 0.25f - 1.0f) << j;
  }
}

// Bit e of the little-endian qh is bit 4 of element e's code.
int q5_code(const uint8_t* qs, uint32_t qh, int e) {
  const int nibble = e < 16 ? (qs[e] & 0x0F) : (qs[e - 16] >> 4);
  return nibble | static_cast<int>(((qh >> e) & 1u) << 4);
}

TEST(DequantizeQ5_0, TakesTheFifthBitFromQh) {
  auto block = zero_block<BlockQ5_0>();
  block.d = kFp16Two;
  const uint32_t qh = 0x8001F00Fu;  // elements 0-3, 12-16 and 31 have bit 4 set
  std::memcpy(block.qh, &qh, 4);
  for (int j = 0; j < 16; ++j) block.qs[j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  const std::vector<float> out = decode(ref::dequantize_row_q5_0, bytes_of<BlockQ5_0>({block}), 32);
  EXPECT_EQ(out[0], 0.0f);    // (0 + 16 - 16) * 2
  EXPECT_EQ(out[4], -24.0f);  // (4 - 16) * 2
  EXPECT_EQ(out[15], 30.0f);  // (15 + 16 - 16) * 2
  EXPECT_EQ(out[16], 30.0f);  // high nibble 15, bit 16 set
  EXPECT_EQ(out[17], -4.0f);  // high nibble 14, bit 17 clear: (14 - 16) * 2
  EXPECT_EQ(out[31], 0.0f);   // high nibble 0, bit 31 set
  for (int e = 0; e < 32; ++e) EXPECT_EQ(out[e], (q5_code(block.qs, qh, e) - 16) * 2.0f) << e;
}

TEST(DequantizeQ5_1, ScalesTheFiveBitCodeAndAddsTheMin) {
  auto block = zero_block<BlockQ5_1>();
  block.d = kFp16Half;
  block.m = kFp16MinusOne;
  const uint32_t qh = 0x5A5A0FF0u;
  std::memcpy(block.qh, &qh, 4);
  for (int j = 0; j < 16; ++j)
    block.qs[j] = static_cast<uint8_t>((j * 5 % 16) | ((j * 11 % 16) << 4));
  const std::vector<float> out = decode(ref::dequantize_row_q5_1, bytes_of<BlockQ5_1>({block}), 32);
  EXPECT_EQ(out[0], -1.0f);  // code 0
  EXPECT_EQ(out[4], 9.0f);   // low nibble 4, bit 4 set: 20 * 0.5 - 1
  for (int e = 0; e < 32; ++e) EXPECT_EQ(out[e], q5_code(block.qs, qh, e) * 0.5f - 1.0f) << e;
}

TEST(DequantizeQ8_0, ScalesSignedBytes) {
  auto block = zero_block<BlockQ8_0>();
  block.d = kFp16Quarter;
  const int8_t codes[] = {-128, -127, -1, 0, 1, 127};
  for (int j = 0; j < 32; ++j) block.qs[j] = codes[j % 6];
  const std::vector<float> out = decode(ref::dequantize_row_q8_0, bytes_of<BlockQ8_0>({block}), 32);
  EXPECT_EQ(out[0], -32.0f);
  EXPECT_EQ(out[1], -31.75f);
  EXPECT_EQ(out[2], -0.25f);
  EXPECT_EQ(out[3], 0.0f);
  EXPECT_EQ(out[5], 31.75f);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(out[j], codes[j % 6] * 0.25f) << j;
}

}  // namespace
}  // namespace met
