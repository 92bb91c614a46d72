// Tests for reference/dequantize_k_ref.cc and reference/k_scales.h: hand-built
// k-quant super-blocks decode to the values the format defines. Each test
// states the layout per element (which byte and bits hold element e's code
// and which group scale applies) and checks some literals worked out by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "tensor/block_types.h"
#include "tensor/reference/k_scales.h"
#include "tensor/reference/reference_kernels.h"
#include "tensor_testing.h"

namespace met {
namespace {

using testing::bytes_of;
using testing::decode;
using testing::zero_block;
using testing::kFp16One;
using testing::kFp16Half;
using testing::kFp16Quarter;


// Scale/min pairs and their 12-byte packing, worked out by hand:
// bytes 0-3 = sc[0..3] | (sc[4..7] >> 4) << 6, bytes 4-7 = m[0..3] |
// (m[4..7] >> 4) << 6, bytes 8-11 = (sc[4..7] & 15) | (m[4..7] & 15) << 4.
constexpr uint8_t kScales[8] = {1, 2, 3, 4, 33, 40, 63, 17};
constexpr uint8_t kMins[8] = {0, 5, 10, 63, 48, 1, 20, 2};
constexpr uint8_t kPackedK4[12] = {0x81, 0x82, 0xC3, 0x44, 0xC0, 0x05,
                                   0x4A, 0x3F, 0x01, 0x18, 0x4F, 0x21};

TEST(KScales, UnpacksSixBitScalesAndMinsOfQ4K) {
  for (int pair = 0; pair < 8; ++pair) {
    const ref::ScaleMin sm = ref::unpack_k4_scale_min(kPackedK4, pair);
    EXPECT_EQ(sm.scale, kScales[pair]) << pair;
    EXPECT_EQ(sm.min, kMins[pair]) << pair;
  }
}

TEST(KScales, PacksSixBitScalesAndMinsOfQ4K) {
  uint8_t packed[12];
  ref::pack_k4_scale_mins(kScales, kMins, packed);
  EXPECT_EQ(std::vector<uint8_t>(packed, packed + 12),
            std::vector<uint8_t>(kPackedK4, kPackedK4 + 12));
}

TEST(KScales, UnpacksQ3KScalesFromNibblesAndHighPairs) {
  // Group 0: low nibble of byte 0 (1), bits 0-1 of byte 8 (2): 1 + 32 - 32 = 1.
  // Group 8: high nibble of byte 0 (2), bits 4-5 of byte 8 (0): 2 - 32 = -30.
  // Group 4: low nibble of byte 4 (15), bits 2-3 of byte 8 (3): 63 - 32 = 31.
  // Group 15: high nibble of byte 7 (0), bits 6-7 of byte 11 (1): 16 - 32 = -16.
  const uint8_t packed[12] = {0x21, 0, 0, 0, 0x0F, 0, 0, 0, 0x0E, 0, 0, 0x40};
  EXPECT_EQ(ref::unpack_q3_k_scale(packed, 0), 1);
  EXPECT_EQ(ref::unpack_q3_k_scale(packed, 8), -30);
  EXPECT_EQ(ref::unpack_q3_k_scale(packed, 4), 31);
  EXPECT_EQ(ref::unpack_q3_k_scale(packed, 15), -16);
  EXPECT_EQ(ref::unpack_q3_k_scale(packed, 1), -32);
}

// Q2_K/Q3_K low bits: element e lives in half h = e / 128, at r = e % 128;
// its two bits are bits 2 * (r / 32) of qs[32 h + r % 32].
int two_bit_code(const uint8_t* qs, int e) {
  const int h = e / 128;
  const int r = e % 128;
  return (qs[32 * h + r % 32] >> (2 * (r / 32))) & 3;
}

TEST(DequantizeQ2_K, ScalesEachGroupAndSubtractsItsMin) {
  auto block = zero_block<BlockQ2_K>();
  block.d = kFp16Half;
  block.dmin = kFp16Quarter;
  for (int g = 0; g < 16; ++g) block.scales[g] = static_cast<uint8_t>(g | ((15 - g) << 4));
  for (int i = 0; i < 64; ++i) block.qs[i] = 0xE4;  // bit pairs 0, 1, 2, 3 from the bottom
  std::vector<float> out = decode(ref::dequantize_row_q2_k, bytes_of<BlockQ2_K>({block}), 256);
  EXPECT_EQ(out[0], -3.75f);    // group 0: 0.5 * 0 * 0 - 0.25 * 15
  EXPECT_EQ(out[40], -2.25f);   // group 2, code 1: 0.5 * 2 * 1 - 0.25 * 13
  EXPECT_EQ(out[200], 11.25f);  // group 12, code 2: 0.5 * 12 * 2 - 0.25 * 3

  for (int i = 0; i < 64; ++i) block.qs[i] = static_cast<uint8_t>(i * 37 + 11);
  out = decode(ref::dequantize_row_q2_k, bytes_of<BlockQ2_K>({block}), 256);
  for (int e = 0; e < 256; ++e) {
    const int g = e / 16;
    const float expected =
        0.5f * static_cast<float>(g) * static_cast<float>(two_bit_code(block.qs, e)) -
        0.25f * static_cast<float>(15 - g);
    EXPECT_EQ(out[e], expected) << e;
  }
}

TEST(DequantizeQ3_K, SubtractsFourWhereTheHighBitIsClear) {
  auto block = zero_block<BlockQ3_K>();
  block.d = kFp16Half;
  const uint8_t packed[12] = {0x21, 0, 0, 0, 0x0F, 0, 0, 0, 0x0E, 0, 0, 0x40};
  std::memcpy(block.scales, packed, 12);
  for (int i = 0; i < 64; ++i) block.qs[i] = 0xE4;
  for (int i = 0; i < 32; ++i) block.hmask[i] = 0x0F;  // high bit set in the first half only
  std::vector<float> out = decode(ref::dequantize_row_q3_k, bytes_of<BlockQ3_K>({block}), 256);
  EXPECT_EQ(out[32], -16.0f);  // group 2 (scale -32), code 1: 0.5 * -32 * 1
  EXPECT_EQ(out[70], 31.0f);   // group 4 (scale 31), code 2, high bit set: 0.5 * 31 * 2
  EXPECT_EQ(out[128], 60.0f);  // group 8 (scale -30), code 0 - 4: 0.5 * -30 * -4
  EXPECT_EQ(out[255], 8.0f);   // group 15 (scale -16), code 3 - 4: 0.5 * -16 * -1

  for (int i = 0; i < 64; ++i) block.qs[i] = static_cast<uint8_t>(i * 53 + 7);
  for (int i = 0; i < 32; ++i) block.hmask[i] = static_cast<uint8_t>(i * 29 + 3);
  for (int i = 0; i < 12; ++i) block.scales[i] = static_cast<uint8_t>(i * 71 + 5);
  out = decode(ref::dequantize_row_q3_k, bytes_of<BlockQ3_K>({block}), 256);
  for (int e = 0; e < 256; ++e) {
    // The high bit of element e is bit e / 32 of hmask[e % 32].
    const bool high = ((block.hmask[e % 32] >> (e / 32)) & 1) != 0;
    const int q = two_bit_code(block.qs, e) - (high ? 0 : 4);
    const int scale = ref::unpack_q3_k_scale(block.scales, e / 16);
    EXPECT_EQ(out[e], 0.5f * static_cast<float>(scale) * static_cast<float>(q)) << e;
  }
}

// Q4_K/Q5_K: element e is in chunk c = e / 64 at l = e % 32; the low nibble
// of qs[32 c + l] if e % 64 < 32, else the high nibble. Group = e / 32.
int k4_nibble(const uint8_t* qs, int e) {
  const uint8_t byte = qs[32 * (e / 64) + e % 32];
  return (e % 64) < 32 ? (byte & 0x0F) : (byte >> 4);
}

TEST(DequantizeQ4_K, AppliesSixBitScalesAndMinsPerGroupOf32) {
  auto block = zero_block<BlockQ4_K>();
  block.d = kFp16One;
  block.dmin = kFp16Half;
  std::memcpy(block.scales, kPackedK4, 12);
  for (int i = 0; i < 128; ++i) block.qs[i] = static_cast<uint8_t>(i * 7 + 3);
  const std::vector<float> out =
      decode(ref::dequantize_row_q4_k, bytes_of<BlockQ4_K>({block}), 256);
  EXPECT_EQ(out[0], 3.0f);        // qs[0] = 3, low nibble 3: 1 * 1 * 3 - 0.5 * 0
  EXPECT_EQ(out[32], -2.5f);      // high nibble of qs[0] is 0: 2 * 0 - 0.5 * 5
  EXPECT_EQ(out[64 + 1], 25.0f);  // qs[33] = 234, low nibble 10, group 2: 3 * 10 - 0.5 * 10
  for (int e = 0; e < 256; ++e) {
    const int g = e / 32;
    const float expected =
        1.0f * static_cast<float>(kScales[g]) * static_cast<float>(k4_nibble(block.qs, e)) -
        0.5f * static_cast<float>(kMins[g]);
    EXPECT_EQ(out[e], expected) << e;
  }
}

TEST(DequantizeQ5_K, AddsSixteenWhereTheQhBitIsSet) {
  auto block = zero_block<BlockQ5_K>();
  block.d = kFp16Half;
  block.dmin = kFp16Quarter;
  std::memcpy(block.scales, kPackedK4, 12);
  for (int i = 0; i < 128; ++i) block.qs[i] = static_cast<uint8_t>(i * 13 + 1);
  for (int i = 0; i < 32; ++i) block.qh[i] = static_cast<uint8_t>(i * 37 + 5);
  const std::vector<float> out =
      decode(ref::dequantize_row_q5_k, bytes_of<BlockQ5_K>({block}), 256);
  // Element 0: qs[0] = 1 (nibble 1), qh[0] = 5 has bit 0 set: code 17;
  // 0.5 * 1 * 17 - 0.25 * 0.
  EXPECT_EQ(out[0], 8.5f);
  for (int e = 0; e < 256; ++e) {
    // The fifth bit of element e is bit e / 32 of qh[e % 32].
    const int code = k4_nibble(block.qs, e) | (((block.qh[e % 32] >> (e / 32)) & 1) << 4);
    const int g = e / 32;
    const float expected = 0.5f * static_cast<float>(kScales[g]) * static_cast<float>(code) -
                           0.25f * static_cast<float>(kMins[g]);
    EXPECT_EQ(out[e], expected) << e;
  }
}

// Q6_K: element e is in half h = e / 128 at r = e % 128, quarter k = r / 32,
// l = r % 32. Its low 4 bits are nibble k / 2 of ql[64 h + l + 32 (k % 2)],
// its top 2 bits are bits 2k of qh[32 h + l]; the code is stored +32.
int q6_code(const BlockQ6_K& block, int e) {
  const int h = e / 128;
  const int k = (e % 128) / 32;
  const int l = e % 32;
  const int low = (block.ql[64 * h + l + 32 * (k % 2)] >> (4 * (k / 2))) & 0x0F;
  const int high = (block.qh[32 * h + l] >> (2 * k)) & 3;
  return (low | (high << 4)) - 32;
}

TEST(DequantizeQ6_K, CombinesQlAndQhIntoSignedSixBitCodes) {
  auto block = zero_block<BlockQ6_K>();
  block.d = kFp16Half;
  const int8_t scales[16] = {1, -2, 3, -4, 5, -6, 7, -8, 127, -128, 10, 11, 12, 13, 14, -15};
  std::memcpy(block.scales, scales, 16);
  for (int i = 0; i < 128; ++i) block.ql[i] = 0x21;  // low nibble 1, high nibble 2
  for (int i = 0; i < 64; ++i) block.qh[i] = 0xE4;   // quarter k gets high bits k
  std::vector<float> out = decode(ref::dequantize_row_q6_k, bytes_of<BlockQ6_K>({block}), 256);
  EXPECT_EQ(out[0], -15.5f);          // k 0: 1 | 0 << 4 = 1, -31; 0.5 * 1 * -31
  EXPECT_EQ(out[32], -22.5f);         // k 1: 1 | 1 << 4 = 17, -15; 0.5 * 3 * -15
  EXPECT_EQ(out[64], 5.0f);           // k 2: 2 | 2 << 4 = 34, 2; 0.5 * 5 * 2
  EXPECT_EQ(out[96], 63.0f);          // k 3: 2 | 3 << 4 = 50, 18; 0.5 * 7 * 18
  EXPECT_EQ(out[128 + 16], 1984.0f);  // group 9 (-128), k 0: 0.5 * -128 * -31

  for (int i = 0; i < 128; ++i) block.ql[i] = static_cast<uint8_t>(i * 41 + 9);
  for (int i = 0; i < 64; ++i) block.qh[i] = static_cast<uint8_t>(i * 23 + 1);
  out = decode(ref::dequantize_row_q6_k, bytes_of<BlockQ6_K>({block}), 256);
  for (int e = 0; e < 256; ++e) {
    const float expected =
        0.5f * static_cast<float>(scales[e / 16]) * static_cast<float>(q6_code(block, e));
    EXPECT_EQ(out[e], expected) << e;
  }
}

TEST(DequantizeQ8_K, ScalesSignedBytesByAFloat) {
  auto block = zero_block<BlockQ8_K>();
  block.d = 0.125f;
  for (int j = 0; j < 256; ++j) block.qs[j] = static_cast<int8_t>(j - 128);
  const std::vector<float> out =
      decode(ref::dequantize_row_q8_k, bytes_of<BlockQ8_K>({block}), 256);
  EXPECT_EQ(out[0], -16.0f);
  EXPECT_EQ(out[128], 0.0f);
  EXPECT_EQ(out[255], 15.875f);
  for (int j = 0; j < 256; ++j) EXPECT_EQ(out[j], 0.125f * static_cast<float>(j - 128)) << j;
}

TEST(DequantizeKQuants, DecodesEverySuperBlockOfARow) {
  auto first = zero_block<BlockQ4_K>();
  auto second = zero_block<BlockQ4_K>();
  first.d = kFp16One;
  second.d = kFp16Half;
  std::memcpy(first.scales, kPackedK4, 12);
  std::memcpy(second.scales, kPackedK4, 12);
  std::memset(first.qs, 0x11, 128);
  std::memset(second.qs, 0x11, 128);
  const std::vector<float> out =
      decode(ref::dequantize_row_q4_k, bytes_of<BlockQ4_K>({first, second}), 512);
  EXPECT_EQ(out[255], 17.0f);       // group 7 of block 0: 1 * 17 * 1
  EXPECT_EQ(out[256 + 255], 8.5f);  // group 7 of block 1: 0.5 * 17 * 1
}

}  // namespace
}  // namespace met
