// Tests for the IQ4_NL / IQ4_XS reference codec (reference/iq4_ref.cc):
// ggml's decoding (the 16 values of kvalues_iq4nl, the nibble order, IQ4_XS's
// split 6-bit group scales), exact round trips of values on the grid, and
// the error of the encoders on Gaussian data.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "tensor/block_types.h"
#include "tensor/half.h"
#include "tensor/reference/reference_kernels.h"
#include "tensor_testing.h"

namespace met {
namespace {

using testing::bytes_of;
using testing::decode;
using testing::encode;

// ggml-common.h's kvalues_iq4nl.
constexpr int kGgmlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

TEST(Iq4NlDequantize, GivesCodeQTheValueOfKvaluesTimesD) {
  BlockIq4Nl block = testing::zero_block<BlockIq4Nl>();
  block.d = f32_to_fp16(0.5f);
  for (int j = 0; j < 16; ++j) block.qs[j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  const std::vector<float> y = decode(ref::dequantize_row_iq4_nl, bytes_of(std::vector<BlockIq4Nl>{block}), 32);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[static_cast<size_t>(j)], 0.5f * static_cast<float>(kGgmlValues[j])) << j;  // low nibbles first
    EXPECT_EQ(y[static_cast<size_t>(j + 16)], 0.5f * static_cast<float>(kGgmlValues[15 - j])) << j;
  }
}

TEST(Iq4XsDequantize, ScalesEachGroupByItsSixBitScaleMinus32) {
  BlockIq4Xs block = testing::zero_block<BlockIq4Xs>();
  block.d = f32_to_fp16(0.25f);
  // Group g's stored scale 8g + 3 (low nibble in scales_l, top 2 bits in scales_h).
  for (int g = 0; g < 8; ++g) {
    const int stored = 8 * g + 3;
    block.scales_l[g / 2] = static_cast<uint8_t>(block.scales_l[g / 2] | ((stored & 15) << (4 * (g % 2))));
    block.scales_h = static_cast<uint16_t>(block.scales_h | ((stored >> 4) << (2 * g)));
  }
  for (int i = 0; i < 128; ++i) block.qs[i] = static_cast<uint8_t>((i % 16) | (((i + 5) % 16) << 4));
  const std::vector<float> y = decode(ref::dequantize_row_iq4_xs, bytes_of(std::vector<BlockIq4Xs>{block}), 256);
  for (int g = 0; g < 8; ++g) {
    const float dl = 0.25f * static_cast<float>(8 * g + 3 - 32);
    for (int j = 0; j < 16; ++j) {
      const auto e = static_cast<size_t>(32 * g + j);
      EXPECT_EQ(y[e], dl * static_cast<float>(kGgmlValues[j])) << g << " " << j;
      EXPECT_EQ(y[e + 16], dl * static_cast<float>(kGgmlValues[(j + 5) % 16])) << g << " " << j;
    }
  }
}

TEST(Iq4NlQuantize, RoundTripsValuesOnItsGridExactly) {
  // Block b: s_b * kvalues[q] with every code present, s_b a power of two.
  std::vector<float> x(32 * 8);
  for (size_t i = 0; i < x.size(); ++i) {
    const int b = static_cast<int>(i / 32);
    x[i] = std::ldexp(1.0f, b - 9) * static_cast<float>(kGgmlValues[(i * 7) % 16]);
  }
  EXPECT_EQ(decode(ref::dequantize_row_iq4_nl, encode(ref::quantize_row_iq4_nl, GgmlType::kIQ4_NL, x), x.size()),
            x);
}

TEST(Iq4XsQuantize, RoundTripsValuesOnItsGridExactly) {
  // Group g: l_g / 2^10 * kvalues[q] with l_0 = -32 (the largest |scale|)
  // and l_g = g - 32: d = -max_scale / 32 = 2^-10 exactly, each l_g its
  // 6-bit scale.
  std::vector<float> x(256 * 2);
  for (size_t i = 0; i < x.size(); ++i) {
    const int g = static_cast<int>(i % 256) / 32;
    const int l = g == 0 ? -32 : -32 + g;  // group 0 carries the largest magnitude
    x[i] = static_cast<float>(l) * std::ldexp(1.0f, -10) * static_cast<float>(kGgmlValues[(i * 5) % 16]);
  }
  EXPECT_EQ(decode(ref::dequantize_row_iq4_xs, encode(ref::quantize_row_iq4_xs, GgmlType::kIQ4_XS, x), x.size()),
            x);
}

// 4.5 and 4.25 bits per weight with a value grid denser near zero: on
// N(0, 1) data both must beat Q4_0 (4.5 bits, uniform grid) as in
// llama.cpp's own comparisons, and stay within the step of 16 levels.
TEST(Iq4Quantize, BeatsQ4_0OnGaussianData) {
  const std::vector<float> x = testing::gaussian(1 << 16, 1234);
  const auto error = [&](ref::QuantizeRowFn q, ref::DequantizeRowFn d, GgmlType t) {
    return testing::relative_rms_error(x, decode(d, encode(q, t, x), x.size()));
  };
  const double q4_0 = error(ref::quantize_row_q4_0, ref::dequantize_row_q4_0, GgmlType::kQ4_0);
  const double nl = error(ref::quantize_row_iq4_nl, ref::dequantize_row_iq4_nl, GgmlType::kIQ4_NL);
  const double xs = error(ref::quantize_row_iq4_xs, ref::dequantize_row_iq4_xs, GgmlType::kIQ4_XS);
  EXPECT_LT(nl, q4_0);
  EXPECT_LT(xs, q4_0);
  EXPECT_LT(nl, 0.105);  // Q4_0's bound in quantize_ref_test.cc
}

TEST(Iq4Quantize, EncodesZerosAsZerosAndNonFiniteInputWithoutTrapping) {
  const std::vector<float> zeros(256, 0.0f);
  EXPECT_EQ(decode(ref::dequantize_row_iq4_xs, encode(ref::quantize_row_iq4_xs, GgmlType::kIQ4_XS, zeros), 256),
            zeros);
  EXPECT_EQ(decode(ref::dequantize_row_iq4_nl, encode(ref::quantize_row_iq4_nl, GgmlType::kIQ4_NL, zeros), 256),
            zeros);
  std::vector<float> x = testing::gaussian(256, 8);
  x[3] = std::nanf("");
  x[40] = INFINITY;
  x[77] = -INFINITY;
  EXPECT_EQ(decode(ref::dequantize_row_iq4_xs, encode(ref::quantize_row_iq4_xs, GgmlType::kIQ4_XS, x), 256).size(),
            256u);
  EXPECT_EQ(decode(ref::dequantize_row_iq4_nl, encode(ref::quantize_row_iq4_nl, GgmlType::kIQ4_NL, x), 256).size(),
            256u);
}

}  // namespace
}  // namespace met
