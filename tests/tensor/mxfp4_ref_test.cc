// Tests for the MXFP4 reference codec (reference/mxfp4_ref.cc) and the E8M0
// scale (mxfp4.h): the value of every code and scale byte, the nibble order,
// llama.cpp's bytes for two blocks (made by ggml's quantize_row_mxfp4_ref),
// its exponent rule and nearest-code choice with ties, exact round trips of
// representable blocks, and the format's error bound on random data.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "tensor/block_types.h"
#include "tensor/mxfp4.h"
#include "tensor/quantize.h"
#include "tensor/reference/reference_kernels.h"
#include "tensor_testing.h"

namespace met {
namespace {

using testing::bytes_of;
using testing::decode;
using testing::encode;

// The E2M1 values of codes 0..15 (sign in bit 3).
constexpr float kE2M1[16] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6, -0.0f, -0.5f, -1, -1.5f, -2, -3, -4, -6};

std::vector<uint8_t> quantize(const std::vector<float>& x) {
  return encode(ref::quantize_row_mxfp4, GgmlType::kMXFP4, x);
}

TEST(E8m0, HalfScaleIsTwoToTheByteMinus128ForEveryByte) {
  for (int e = 0; e < 256; ++e) {
    EXPECT_EQ(e8m0_to_f32_half(static_cast<uint8_t>(e)), std::ldexp(1.0f, e - 128)) << "e = " << e;
  }
}

TEST(Mxfp4Dequantize, GivesEachCodeItsE2M1ValueTimesTwoToTheEMinus127) {
  BlockMxfp4 block = testing::zero_block<BlockMxfp4>();
  block.e = 127;  // scale 1
  for (int j = 0; j < 16; ++j) block.qs[j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  BlockMxfp4 scaled = block;
  scaled.e = 130;  // scale 8
  const std::vector<float> x = decode(ref::dequantize_row_mxfp4, bytes_of<BlockMxfp4>({block, scaled}), 64);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(x[j], kE2M1[j]) << "low nibble " << j;
    EXPECT_EQ(x[16 + j], kE2M1[15 - j]) << "high nibble of byte " << j;
    EXPECT_EQ(x[32 + j], 8 * kE2M1[j]) << "scaled, low nibble " << j;
  }
}

// Inputs and bytes from ggml's quantize_row_mxfp4_ref (two blocks of a seeded
// generator), as published with candle's MXFP4 tests.
struct Golden {
  std::array<float, 32> input;
  uint8_t e;
  std::array<uint8_t, 16> qs;
};

const Golden kGoldens[] = {
    {{-0.835388184f, -0.960388184f, -1.0680542f,  -0.445983887f, -1.15429688f, -1.93328857f, -1.16522217f,
      -0.382568359f, -0.77532959f,  -0.570251465f, -1.63549805f, -0.967651367f, -0.876098633f, -1.50268555f,
      -0.160827637f, -1.77832031f,  -0.683288574f, -1.34307861f, -1.62945557f, -0.65802002f, -0.162536621f,
      -1.73706055f,  -1.17883301f,  -0.301757812f, -1.18078613f, -1.93463135f, -0.867736816f, -0.392028809f,
      -1.70367432f,  -0.194030762f, -1.03997803f,  -1.09802246f},
     0x7d,
     {0xdd, 0xfe, 0xfe, 0xdc, 0x9e, 0xff, 0xee, 0xab, 0xed, 0xfc, 0xdf, 0xbe, 0xfe, 0xaf, 0xe9, 0xef}},
    {{0.194091797f,  -0.401489258f, -0.336669922f, 0.383911133f,  0.985534668f,  -0.794616699f, 0.955200195f,
      0.940307617f,  -0.512634277f, -0.33392334f,  -0.315612793f, 0.548034668f,  0.80847168f,   0.579223633f,
      -0.954284668f, -0.98034668f,  -0.134216309f, 0.443725586f,  0.168823242f,  -0.544677734f, -0.984619141f,
      0.12713623f,   -0.690002441f, 0.810180664f,  0.102355957f,  -0.107421875f, 0.931091309f,  0.11529541f,
      0.615844727f,  -0.0777587891f, -0.147155762f, -0.212036133f},
     0x7c,
     {0xa3, 0x6d, 0x3d, 0xe5, 0xf7, 0x2f, 0xf7, 0x77, 0x2e, 0xad, 0x7d, 0x26, 0x67, 0x96, 0xaf, 0xbf}},
};

TEST(Mxfp4Quantize, WritesTheBytesLlamaCppWrites) {
  for (const Golden& g : kGoldens) {
    const std::vector<uint8_t> bytes = quantize(std::vector<float>(g.input.begin(), g.input.end()));
    ASSERT_EQ(bytes.size(), 17u);
    EXPECT_EQ(bytes[0], g.e);
    EXPECT_EQ(std::vector<uint8_t>(bytes.begin() + 1, bytes.end()), std::vector<uint8_t>(g.qs.begin(), g.qs.end()));
  }
}

TEST(Mxfp4Quantize, TakesTheExponentFromTheLargestMagnitude) {
  // e = floor(log2 amax) + 125; all-zero (and denormal-tiny) blocks get e = 0.
  const std::pair<float, uint8_t> cases[] = {{1.0f, 125}, {1.99f, 125}, {-2.0f, 126}, {0.3f, 123},
                                             {6.0e4f, 140}, {0.0f, 0},  {1e-40f, 0}};
  for (const auto& [amax, e] : cases) {
    std::vector<float> x(32, 0.0f);
    x[5] = amax;
    x[20] = amax / 3;
    EXPECT_EQ(quantize(x)[0], e) << "amax " << amax;
  }
  const std::vector<uint8_t> zeros = quantize(std::vector<float>(32, 0.0f));
  EXPECT_EQ(zeros, std::vector<uint8_t>(17, 0));
}

TEST(Mxfp4Quantize, RoundsToTheNearestCodeWithTiesToTheLowerCode) {
  // amax 4 -> e = 127, values 0 .. 6 in steps of 0.5, 1 and 2.
  const std::pair<float, int> cases[] = {{4.0f, 6},    {0.25f, 0},  {-0.25f, 0}, {0.3f, 1},  {2.5f, 4},
                                         {-2.5f, 12},  {5.0f, 6},   {-5.0f, 14}, {7.9f, 7},  {-7.0f, 15},
                                         {1.25f, 2},   {-0.0f, 0},  {0.76f, 2},  {3.4f, 5},  {-1.74f, 11}};
  std::vector<float> x(32, 0.0f);
  x[31] = 4.0f;  // fixes e
  for (size_t i = 0; i < std::size(cases); ++i) x[i] = cases[i].first;
  const std::vector<uint8_t> bytes = quantize(x);
  ASSERT_EQ(bytes[0], 127);
  for (size_t i = 0; i < std::size(cases); ++i) {
    const int code = (bytes[1 + i % 16] >> (i < 16 ? 0 : 4)) & 0x0F;
    EXPECT_EQ(code, cases[i].second) << "x = " << cases[i].first;
  }
}

TEST(Mxfp4Quantize, RepresentableBlocksRoundTripExactly) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 200; ++trial) {
    BlockMxfp4 block = testing::zero_block<BlockMxfp4>();
    block.e = static_cast<uint8_t>(2 + rng() % 250);
    int codes[32];
    for (int& c : codes) {
      c = static_cast<int>(rng() % 15);
      if (c >= 8) ++c;  // no -0: it re-encodes as +0
    }
    codes[rng() % 32] = (rng() % 2 ? 0 : 8) + 6 + static_cast<int>(rng() % 2);  // |value| 4 or 6 fixes e
    for (int j = 0; j < 16; ++j) block.qs[j] = static_cast<uint8_t>(codes[j] | (codes[j + 16] << 4));
    const std::vector<uint8_t> bytes = bytes_of<BlockMxfp4>({block});
    EXPECT_EQ(quantize(decode(ref::dequantize_row_mxfp4, bytes, 32)), bytes) << "trial " << trial;
  }
}

// Steps of 0.5, 1 and 2 units (u = 2^(e-127)) and clipping above 6 u, with
// amax in [4 u, 8 u): every error is at most a quarter of |x|, or of u.
TEST(Mxfp4Quantize, ErrorsStayWithinAQuarterOfTheValueOrTheUnit) {
  const std::vector<float> x = testing::gaussian_with_outliers(32 * 64, 17);
  std::vector<uint8_t> bytes(testing::row_bytes(GgmlType::kMXFP4, x.size()));
  ASSERT_TRUE(quantize_row(GgmlType::kMXFP4, x, bytes).ok());
  EXPECT_EQ(bytes, quantize(x));
  std::vector<float> y(x.size());
  ASSERT_TRUE(dequantize_row(GgmlType::kMXFP4, bytes, y).ok());
  for (size_t i = 0; i < x.size(); ++i) {
    const float unit = 2 * e8m0_to_f32_half(bytes[17 * (i / 32)]);
    EXPECT_LE(std::fabs(y[i] - x[i]), 0.25f * std::max(std::fabs(x[i]), unit)) << "element " << i;
  }
  EXPECT_LT(testing::relative_rms_error(x, y), 0.2);  // 0.16 here: outliers coarsen their blocks
}

}  // namespace
}  // namespace met
