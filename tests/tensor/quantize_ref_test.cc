// Tests for the reference encoders (reference/quantize_legacy_ref.cc,
// quantize_k_ref.cc, k_quantizer.h): round-trip error on random data within
// bounds derived from each format's step size, exact round trips for values
// the format represents exactly, and degenerate rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "tensor/block_types.h"
#include "tensor/half.h"
#include "tensor/reference/reference_kernels.h"
#include "tensor_testing.h"

namespace met {
namespace {

using testing::decode;
using testing::encode;
using testing::gaussian;
using testing::relative_rms_error;

struct Codec {
  GgmlType type;
  ref::QuantizeRowFn quantize;
  ref::DequantizeRowFn dequantize;
};

constexpr Codec kQ8_0{GgmlType::kQ8_0, ref::quantize_row_q8_0, ref::dequantize_row_q8_0};
constexpr Codec kQ4_0{GgmlType::kQ4_0, ref::quantize_row_q4_0, ref::dequantize_row_q4_0};
constexpr Codec kQ2_K{GgmlType::kQ2_K, ref::quantize_row_q2_k, ref::dequantize_row_q2_k};
constexpr Codec kQ3_K{GgmlType::kQ3_K, ref::quantize_row_q3_k, ref::dequantize_row_q3_k};
constexpr Codec kQ4_K{GgmlType::kQ4_K, ref::quantize_row_q4_k, ref::dequantize_row_q4_k};
constexpr Codec kQ5_0{GgmlType::kQ5_0, ref::quantize_row_q5_0, ref::dequantize_row_q5_0};
constexpr Codec kQ4_1{GgmlType::kQ4_1, ref::quantize_row_q4_1, ref::dequantize_row_q4_1};
constexpr Codec kQ5_1{GgmlType::kQ5_1, ref::quantize_row_q5_1, ref::dequantize_row_q5_1};
constexpr Codec kQ5_K{GgmlType::kQ5_K, ref::quantize_row_q5_k, ref::dequantize_row_q5_k};
constexpr Codec kQ6_K{GgmlType::kQ6_K, ref::quantize_row_q6_k, ref::dequantize_row_q6_k};
constexpr Codec kQ8_K{GgmlType::kQ8_K, ref::quantize_row_q8_k, ref::dequantize_row_q8_k};
constexpr Codec kF16{GgmlType::kF16, ref::quantize_row_f16, ref::dequantize_row_f16};
constexpr Codec kBf16{GgmlType::kBF16, ref::quantize_row_bf16, ref::dequantize_row_bf16};
constexpr Codec kF32{GgmlType::kF32, ref::quantize_row_f32, ref::dequantize_row_f32};

std::vector<float> round_trip(const Codec& codec, const std::vector<float>& x) {
  return decode(codec.dequantize, encode(codec.quantize, codec.type, x), x.size());
}

// 64 Ki standard-normal values, the shape of typical weights.
double gaussian_error(const Codec& codec) {
  const std::vector<float> x = gaussian(1 << 16, 1234);
  return relative_rms_error(x, round_trip(codec, x));
}

// A plain asymmetric 4-bit quantizer per group of 32 (min/max scaling, exact
// float scales): what Q4_K's search has to beat.
double plain_min_max_4bit_error(const std::vector<float>& x) {
  std::vector<float> y(x.size());
  for (size_t g = 0; g < x.size(); g += 32) {
    float lo = x[g];
    float hi = x[g];
    for (size_t i = g; i < g + 32; ++i) {
      lo = std::min(lo, x[i]);
      hi = std::max(hi, x[i]);
    }
    const float step = (hi - lo) / 15.0f;
    for (size_t i = g; i < g + 32; ++i) y[i] = lo + step * std::nearbyint((x[i] - lo) / step);
  }
  return relative_rms_error(x, y);
}

// Bounds: a uniform quantizer with step s has RMS error s / sqrt(12). For
// N(0, 1) data the largest |x| of a block of 32 is about 2.1 (of 16, 1.8; of
// 256, 2.9), which fixes the step. Each bound sits 12-25% above the measured
// value (given in each test), so a regression in the scale choice or search
// shows, while a change in the seed does not.
TEST(QuantizeQ8_0, RoundTripErrorIsWithinTheStepOf127Levels) {
  // s = 2.1 / 127 = 0.0165, s / sqrt(12) = 0.0048, plus the fp16 scale's
  // rounding; measured 0.0054.
  EXPECT_LT(gaussian_error(kQ8_0), 0.0065);
}

TEST(QuantizeQ4_0, RoundTripErrorIsWithinTheStepOf8Levels) {
  // s = 2.1 / 8 = 0.26, s / sqrt(12) = 0.076 before the clamped +8 side;
  // measured 0.086.
  EXPECT_LT(gaussian_error(kQ4_0), 0.105);
}

TEST(QuantizeQ5_0, HalvesQ4_0sStep) {
  // 32 levels over the same signed range: half Q4_0's step.
  EXPECT_LT(gaussian_error(kQ5_0), 0.6 * gaussian_error(kQ4_0));
}

TEST(QuantizeQ4_1, RoundTripErrorIsWithinTheStepOf16LevelsOverTheRange) {
  // The range of 32 N(0, 1) values is about 2 * 2.1: s = 4.2 / 15 = 0.28,
  // s / sqrt(12) = 0.081, with fp16 d and m; the offset wastes no level on
  // the side Q4_0 leaves empty, so it must also beat Q4_0.
  EXPECT_LT(gaussian_error(kQ4_1), 0.095);
  EXPECT_LT(gaussian_error(kQ4_1), gaussian_error(kQ4_0));
}

TEST(QuantizeQ5_1, HalvesQ4_1sStep) {
  EXPECT_LT(gaussian_error(kQ5_1), 0.6 * gaussian_error(kQ4_1));
}

TEST(QuantizeLegacy, RoundTripsValuesOnTheirGridsExactly) {
  // Block b: d_b = 2^(b - 6) and every code q present, values d_b (q - offset)
  // (Q5_0: -16 d_b is the extreme) or d_b q - 3 d_b (minimum -3 d_b, exact in
  // fp16): the block's extremes give back d_b, and every value is a code.
  const auto grid = [](int levels, int offset, bool with_min) {
    std::vector<float> x(32 * 6);
    for (size_t i = 0; i < x.size(); ++i) {
      const int b = static_cast<int>(i / 32);
      const int q = static_cast<int>((i * 7) % 32) % levels;
      const float d = std::ldexp(1.0f, b - 6);
      x[i] = with_min ? d * static_cast<float>(q) - 3.0f * d : d * static_cast<float>(q - offset);
    }
    return x;
  };
  EXPECT_EQ(round_trip(kQ5_0, grid(32, 16, false)), grid(32, 16, false));
  EXPECT_EQ(round_trip(kQ4_1, grid(16, 0, true)), grid(16, 0, true));
  EXPECT_EQ(round_trip(kQ5_1, grid(32, 0, true)), grid(32, 0, true));
}

TEST(QuantizeQ4_K, RoundTripErrorBeatsPlainMinMaxScaling) {
  // Plain min/max over 15 steps measures 0.081 on this data; the weighted
  // scale/min search must win even after 6-bit scales and fp16 super-scales.
  // Measured 0.072.
  const std::vector<float> x = gaussian(1 << 16, 1234);
  const double plain = plain_min_max_4bit_error(x);
  EXPECT_LT(gaussian_error(kQ4_K), 0.93 * plain);
  EXPECT_LT(gaussian_error(kQ4_K), 0.08);
}

TEST(QuantizeQ4_K, IsMoreAccurateThanQ4_0AtTheSameSize) {
  EXPECT_LT(gaussian_error(kQ4_K), 0.85 * gaussian_error(kQ4_0));  // both 4.5 bits per weight
}

TEST(QuantizeQ5_K, RoundTripErrorIsWithinTheStepOf32Levels) {
  // Min/max over 31 steps of a group of 32 spanning about 2 * 2.1: s = 0.135,
  // s / sqrt(12) = 0.039 before the search, the 6-bit scales and fp16
  // super-scales.
  EXPECT_LT(gaussian_error(kQ5_K), 0.039);
}

TEST(QuantizeQ5_K, HalvesQ4_KsError) {
  // One more bit halves the step (5.5 against 4.5 bits per weight).
  EXPECT_LT(gaussian_error(kQ5_K), 0.6 * gaussian_error(kQ4_K));
}

TEST(QuantizeQ2_K, RoundTripErrorIsWithinTheStepOf4LevelsOverTheRange) {
  // The range of 16 N(0, 1) values is about 2 * 1.8: s = 3.6 / 3 = 1.2,
  // s / sqrt(12) = 0.35 for plain min/max scaling; the search trades the
  // extremes for a finer step, then 4-bit scales and mins cost a little.
  EXPECT_LT(gaussian_error(kQ2_K), 0.35);
}

TEST(QuantizeQ3_K, RoundTripErrorIsWithinTheStepOf8Levels) {
  // s = 1.8 / 4 = 0.45, s / sqrt(12) = 0.13 before the search and the 6-bit
  // group scales, where the side opposite the group's extreme has one level
  // fewer (codes -4..3); measured 0.153. One more bit than Q2_K must cut its
  // error well down.
  EXPECT_LT(gaussian_error(kQ3_K), 0.18);
  EXPECT_LT(gaussian_error(kQ3_K), 0.7 * gaussian_error(kQ2_K));
}

TEST(QuantizeQ3_K, IsLessAccurateThanQ4_K) {
  EXPECT_GT(gaussian_error(kQ3_K), gaussian_error(kQ4_K));
}

TEST(QuantizeQ6_K, RoundTripErrorIsWithinTheStepOf64Levels) {
  // s = 1.8 / 32 = 0.056, s / sqrt(12) = 0.016, plus 8-bit group scales;
  // measured 0.0178.
  EXPECT_LT(gaussian_error(kQ6_K), 0.02);
}

TEST(QuantizeQ8_K, RoundTripErrorIsWithinTheStepOf127Levels) {
  // One scale per 256: s = 2.9 / 127, s / sqrt(12) = 0.0066; measured 0.0070.
  EXPECT_LT(gaussian_error(kQ8_K), 0.0085);
}

TEST(QuantizeF16, RoundTripErrorIsHalfAnUlp) {
  // 11-bit significand: relative error at most 2^-11 per value.
  EXPECT_LT(gaussian_error(kF16), std::ldexp(1.0, -11));
}

TEST(QuantizeBf16, RoundTripErrorIsHalfAnUlp) {
  EXPECT_LT(gaussian_error(kBf16), std::ldexp(1.0, -8));  // 8-bit significand
}

TEST(QuantizeF32, RoundTripsExactly) {
  const std::vector<float> x = gaussian(100, 5);
  EXPECT_EQ(round_trip(kF32, x), x);
}

TEST(QuantizeF16, RoundTripsRepresentableValuesExactly) {
  const std::vector<float> x = {0.0f, -0.0f, 1.0f, -65504.0f, 0.099975586f, std::ldexp(1.0f, -24)};
  EXPECT_EQ(testing::float_bits(round_trip(kF16, x)), testing::float_bits(x));
}

TEST(QuantizeBf16, RoundTripsRepresentableValuesExactly) {
  const std::vector<float> x = {
      0.0f, -0.0f, 1.0f, bf16_to_f32(0xFF7F), bf16_to_f32(0x0001), bf16_to_f32(0x4049)};
  EXPECT_EQ(testing::float_bits(round_trip(kBf16, x)), testing::float_bits(x));
}

TEST(QuantizeQ8_0, RoundTripsMultiplesOfTheScaleExactly) {
  // Codes -127..127 times 0.25: max |x| = 31.75 gives d = 0.25 exactly.
  std::vector<float> x(kQk * 8);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = 0.25f * static_cast<float>(static_cast<int>(i % 255) - 127);
  for (size_t b = 0; b < x.size(); b += kQk) x[b] = (b / kQk) % 2 == 0 ? 31.75f : -31.75f;
  EXPECT_EQ(round_trip(kQ8_0, x), x);
}

TEST(QuantizeQ4_0, RoundTripsMultiplesOfTheScaleExactly) {
  // (q - 8) * 0.5 for q in 0..15: -4 is the extreme, so d = -4 / -8 = 0.5.
  std::vector<float> x(kQk * 4);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = 0.5f * static_cast<float>(static_cast<int>(i * 7 % 16) - 8);
  EXPECT_EQ(round_trip(kQ4_0, x), x);
}

TEST(QuantizeQ4_K, RoundTripsValuesOnItsGridExactly) {
  // Group g: x = scale_g * q - min_g with q covering 0..15, scale_g =
  // (63 - 7g) / 64 and min_g = (63 - 9g) / 32, so d = 1/64, dmin = 1/32
  // and the 6-bit codes 63 - 7g, 63 - 9g are exact.
  std::vector<float> x(kQkK * 2);
  for (size_t i = 0; i < x.size(); ++i) {
    const int g = static_cast<int>(i % kQkK) / 32;
    const int q = static_cast<int>(i * 5 % 16);
    x[i] = static_cast<float>(63 - 7 * g) / 64.0f * static_cast<float>(q) -
           static_cast<float>(63 - 9 * g) / 32.0f;
  }
  EXPECT_EQ(round_trip(kQ4_K, x), x);
}

TEST(QuantizeQ5_K, RoundTripsValuesOnItsGridExactly) {
  // As Q4_K's grid with q covering 0..31: every fifth bit is exercised in
  // both halves of every 64.
  std::vector<float> x(kQkK * 2);
  for (size_t i = 0; i < x.size(); ++i) {
    const int g = static_cast<int>(i % kQkK) / 32;
    const int q = static_cast<int>(i * 7 % 32);
    x[i] = static_cast<float>(63 - 7 * g) / 64.0f * static_cast<float>(q) -
           static_cast<float>(63 - 9 * g) / 32.0f;
  }
  EXPECT_EQ(round_trip(kQ5_K, x), x);
}

TEST(QuantizeQ6_K, RoundTripsValuesOnItsGridExactly) {
  // Group g: x = s_g * q, q in -32..31 with -32 present, s_g = (128 - 5g) / 512,
  // so d = -1/512 and the 8-bit scale -(128 - 5g) are exact.
  std::vector<float> x(kQkK * 2);
  for (size_t i = 0; i < x.size(); ++i) {
    const int g = static_cast<int>(i % kQkK) / 16;
    const int q = i % 16 == 0 ? -32 : static_cast<int>(i * 11 % 64) - 32;
    x[i] = static_cast<float>(128 - 5 * g) / 512.0f * static_cast<float>(q);
  }
  EXPECT_EQ(round_trip(kQ6_K, x), x);
}

TEST(QuantizeQ2_K, RoundTripsValuesOnItsGridExactly) {
  // Group g: x = s_g q - m_g with q covering 0..3, s_g = (15 - g % 8) / 16
  // and m_g = (15 - g) / 8, so d = 1/16, dmin = 1/8 and the 4-bit codes
  // 15 - g % 8 and 15 - g are exact.
  std::vector<float> x(kQkK * 2);
  for (size_t i = 0; i < x.size(); ++i) {
    const int g = static_cast<int>(i % kQkK) / 16;
    const int q = static_cast<int>(i * 5 % 4);
    x[i] = static_cast<float>(15 - g % 8) / 16.0f * static_cast<float>(q) - static_cast<float>(15 - g) / 8.0f;
  }
  EXPECT_EQ(round_trip(kQ2_K, x), x);
}

TEST(QuantizeQ3_K, RoundTripsValuesOnItsGridExactly) {
  // Group g: x = s_g q, q in -4..3 with -4 present, s_g = (32 - g) / 64, so
  // d = -1/64 and the 6-bit scales -(32 - g) are exact; every element's high
  // bit is exercised.
  std::vector<float> x(kQkK * 2);
  for (size_t i = 0; i < x.size(); ++i) {
    const int g = static_cast<int>(i % kQkK) / 16;
    const int q = i % 16 == 0 ? -4 : static_cast<int>(i * 3 % 8) - 4;
    x[i] = static_cast<float>(32 - g) / 64.0f * static_cast<float>(q);
  }
  EXPECT_EQ(round_trip(kQ3_K, x), x);
}

TEST(QuantizeBlockTypes, EncodeZerosAsZeros) {
  const std::vector<float> zeros(kQkK * 2, 0.0f);
  for (const Codec& codec : {kQ8_0, kQ4_0, kQ5_0, kQ4_1, kQ5_1, kQ2_K, kQ3_K, kQ4_K, kQ5_K, kQ6_K, kQ8_K}) {
    EXPECT_EQ(round_trip(codec, zeros), zeros) << ggml_type_name(codec.type);
  }
}

TEST(QuantizeBlockTypes, KeepConstantBlocksClose) {
  for (const float c : {3.0f, -0.75f}) {
    const std::vector<float> x(kQkK, c);
    for (const Codec& codec : {kQ8_0, kQ4_0, kQ5_0, kQ4_1, kQ5_1, kQ2_K, kQ3_K, kQ4_K, kQ5_K, kQ6_K, kQ8_K}) {
      const std::vector<float> y = round_trip(codec, x);
      for (const float v : y) ASSERT_NEAR(v, c, 0.01 * std::fabs(c)) << ggml_type_name(codec.type);
    }
  }
}

TEST(QuantizeBlockTypes, HandleBlocksOfWildlyDifferentMagnitudes) {
  std::vector<float> x = gaussian(kQkK * 4, 99);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] *= std::ldexp(1.0f, static_cast<int>(i / 32 % 8) * 3 - 12);
  for (const Codec& codec : {kQ8_0, kQ4_0, kQ5_0, kQ4_1, kQ5_1, kQ2_K, kQ3_K, kQ4_K, kQ5_K, kQ6_K, kQ8_K}) {
    const std::vector<float> y = round_trip(codec, x);
    for (const float v : y) ASSERT_TRUE(std::isfinite(v)) << ggml_type_name(codec.type);
    // The largest groups dominate the relative error: no worse than 1.5
    // times the format's own error on plain data (0.2 at least).
    const double bound = std::max(0.2, 1.5 * gaussian_error(codec));
    EXPECT_LT(relative_rms_error(x, y), bound) << ggml_type_name(codec.type);
  }
}

TEST(QuantizeQ8_K, FillsBlockSumsOfEachGroupOf16) {
  const std::vector<float> x = gaussian(kQkK, 3);
  const std::vector<uint8_t> bytes = encode(ref::quantize_row_q8_k, GgmlType::kQ8_K, x);
  BlockQ8_K block;
  std::memcpy(&block, bytes.data(), sizeof(block));
  for (int g = 0; g < 16; ++g) {
    int sum = 0;
    for (int j = 0; j < 16; ++j) sum += block.qs[16 * g + j];
    EXPECT_EQ(block.bsums[g], sum) << g;
  }
}

TEST(QuantizeBlockTypes, NeverProduceOutOfRangeCodesFromNonFiniteInput) {
  std::vector<float> x = gaussian(kQkK, 8);
  x[3] = std::nanf("");
  x[40] = INFINITY;
  x[77] = -INFINITY;
  for (const Codec& codec : {kQ8_0, kQ4_0, kQ5_0, kQ4_1, kQ5_1, kQ2_K, kQ3_K, kQ4_K, kQ5_K, kQ6_K, kQ8_K}) {
    const std::vector<float> y = round_trip(codec, x);  // must not trap (UBSan) or crash
    EXPECT_EQ(y.size(), x.size());
  }
}

}  // namespace
}  // namespace met
