// Tests for tensor/half.h: fp16 and bf16 edge cases from the IEEE definitions,
// and agreement with the F16C instructions over every fp16 value and many
// random floats (the baseline ISA, so always available).
#include "tensor/half.h"

#include <gtest/gtest.h>
#include <immintrin.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

namespace met {
namespace {

uint32_t bits_of(float f) { return std::bit_cast<uint32_t>(f); }
float float_of(uint32_t bits) { return std::bit_cast<float>(bits); }

static_assert(fp16_to_f32(0x3C00) == 1.0f);
static_assert(f32_to_fp16(-2.0f) == 0xC000);
static_assert(bf16_to_f32(0x3F80) == 1.0f);
static_assert(f32_to_bf16(1.0f) == 0x3F80);

TEST(Fp16, ConvertsZerosKeepingTheirSign) {
  EXPECT_EQ(f32_to_fp16(0.0f), 0x0000);
  EXPECT_EQ(f32_to_fp16(-0.0f), 0x8000);
  EXPECT_EQ(bits_of(fp16_to_f32(0x0000)), 0x00000000u);
  EXPECT_EQ(bits_of(fp16_to_f32(0x8000)), 0x80000000u);
}

TEST(Fp16, DecodesSubnormalsExactly) {
  EXPECT_EQ(fp16_to_f32(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(fp16_to_f32(0x0002), std::ldexp(1.0f, -23));
  EXPECT_EQ(fp16_to_f32(0x03FF), std::ldexp(1023.0f, -24));
  EXPECT_EQ(fp16_to_f32(0x8200), -std::ldexp(512.0f, -24));
  EXPECT_EQ(fp16_to_f32(0x0400), std::ldexp(1.0f, -14));  // smallest normal
}

TEST(Fp16, EncodesSubnormalsWithRoundingToEven) {
  EXPECT_EQ(f32_to_fp16(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(f32_to_fp16(std::ldexp(1023.0f, -24)), 0x03FF);
  EXPECT_EQ(f32_to_fp16(std::ldexp(1.0f, -25)), 0x0000);  // tie with 0: to even
  EXPECT_EQ(f32_to_fp16(std::ldexp(3.0f, -25)), 0x0002);  // tie between 1 and 2 units
  EXPECT_EQ(f32_to_fp16(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
  EXPECT_EQ(f32_to_fp16(std::ldexp(1.0f, -30)), 0x0000);
  EXPECT_EQ(f32_to_fp16(std::ldexp(2047.0f, -25)), 0x0400);  // rounds up into the normals
}

TEST(Fp16, DecodesLargestFiniteAndInfinities) {
  EXPECT_EQ(fp16_to_f32(0x7BFF), 65504.0f);
  EXPECT_EQ(fp16_to_f32(0xFBFF), -65504.0f);
  EXPECT_EQ(fp16_to_f32(0x7C00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(fp16_to_f32(0xFC00), -std::numeric_limits<float>::infinity());
}

TEST(Fp16, OverflowsToInfinityFromHalfwayPastTheLargestFinite) {
  EXPECT_EQ(f32_to_fp16(65504.0f), 0x7BFF);
  EXPECT_EQ(f32_to_fp16(65519.996f), 0x7BFF);
  EXPECT_EQ(f32_to_fp16(65520.0f), 0x7C00);  // the tie goes to the even neighbour, 2^16
  EXPECT_EQ(f32_to_fp16(-1e10f), 0xFC00);
  EXPECT_EQ(f32_to_fp16(std::numeric_limits<float>::infinity()), 0x7C00);
}

TEST(Fp16, RoundsHalfwayCasesToEven) {
  const float ulp = std::ldexp(1.0f, -10);             // fp16 spacing in [1, 2)
  EXPECT_EQ(f32_to_fp16(1.0f + ulp / 2), 0x3C00);      // 1.0 is even
  EXPECT_EQ(f32_to_fp16(1.0f + 3 * ulp / 2), 0x3C02);  // 1 + 2 ulp is even
  EXPECT_EQ(f32_to_fp16(std::nextafter(1.0f + ulp / 2, 2.0f)), 0x3C01);
  EXPECT_EQ(f32_to_fp16(-(1.0f + ulp / 2)), 0xBC00);
}

TEST(Fp16, KeepsNanAsQuietNanWithItsPayload) {
  EXPECT_TRUE(std::isnan(fp16_to_f32(0x7E00)));
  EXPECT_EQ(bits_of(fp16_to_f32(0x7C01)), 0x7FC02000u);  // signalling becomes quiet
  EXPECT_EQ(bits_of(fp16_to_f32(0xFE00)), 0xFFC00000u);
  EXPECT_EQ(f32_to_fp16(std::numeric_limits<float>::quiet_NaN()), 0x7E00);
  EXPECT_EQ(f32_to_fp16(float_of(0x7F800001u)), 0x7E00);  // payload below fp16's bits
  EXPECT_EQ(f32_to_fp16(float_of(0xFFA02000u)), 0xFF01);
}

TEST(Fp16, RoundTripsEveryNonNanValue) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const auto half = static_cast<uint16_t>(h);
    const float f = fp16_to_f32(half);
    if (std::isnan(f)) {
      EXPECT_EQ(f32_to_fp16(f), half | 0x0200) << std::hex << h;
    } else {
      EXPECT_EQ(f32_to_fp16(f), half) << std::hex << h;
    }
  }
}

TEST(Fp16, MatchesF16cOnEveryHalfValue) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const auto half = static_cast<uint16_t>(h);
    ASSERT_EQ(bits_of(fp16_to_f32(half)), bits_of(_cvtsh_ss(half))) << std::hex << h;
  }
}

TEST(Fp16, MatchesF16cOnRandomFloats) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> any_bits;
  // Exponents near fp16's range, where the rounding cases are.
  std::uniform_int_distribution<uint32_t> near_range(0x32000000u, 0x48000000u);
  for (int i = 0; i < 2'000'000; ++i) {
    uint32_t bits = (i % 2 == 0) ? any_bits(rng) : near_range(rng) | (any_bits(rng) & 0x80000000u);
    const float f = float_of(bits);
    ASSERT_EQ(f32_to_fp16(f), _cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT)) << std::hex << bits;
  }
}

TEST(Bf16, ConvertsZerosSubnormalsAndInfinities) {
  EXPECT_EQ(f32_to_bf16(0.0f), 0x0000);
  EXPECT_EQ(f32_to_bf16(-0.0f), 0x8000);
  EXPECT_EQ(f32_to_bf16(float_of(0x00010000u)), 0x0001);  // subnormal kept, not flushed
  EXPECT_EQ(bits_of(bf16_to_f32(0x0001)), 0x00010000u);
  EXPECT_EQ(f32_to_bf16(std::numeric_limits<float>::infinity()), 0x7F80);
  EXPECT_EQ(f32_to_bf16(-std::numeric_limits<float>::infinity()), 0xFF80);
  EXPECT_EQ(bf16_to_f32(0xFF80), -std::numeric_limits<float>::infinity());
}

TEST(Bf16, RoundsHalfwayCasesToEven) {
  EXPECT_EQ(f32_to_bf16(float_of(0x3F808000u)), 0x3F80);  // tie, 0x3F80 is even
  EXPECT_EQ(f32_to_bf16(float_of(0x3F818000u)), 0x3F82);  // tie, 0x3F82 is even
  EXPECT_EQ(f32_to_bf16(float_of(0x3F808001u)), 0x3F81);
  EXPECT_EQ(f32_to_bf16(float_of(0x3F807FFFu)), 0x3F80);
  EXPECT_EQ(f32_to_bf16(float_of(0x807F8000u)), 0x8080);  // subnormal tie up to the normals
}

TEST(Bf16, OverflowsToInfinityOnlyPastTheLargestFinite) {
  EXPECT_EQ(f32_to_bf16(float_of(0x7F7F7FFFu)), 0x7F7F);
  EXPECT_EQ(f32_to_bf16(float_of(0x7F7F8000u)), 0x7F80);  // tie goes to even: inf
  EXPECT_EQ(f32_to_bf16(std::numeric_limits<float>::max()), 0x7F80);
}

TEST(Bf16, KeepsNanAsQuietNan) {
  EXPECT_EQ(f32_to_bf16(float_of(0x7F800001u)), 0x7FC0);  // would round to inf without care
  EXPECT_EQ(f32_to_bf16(float_of(0xFFFFFFFFu)), 0xFFFF);  // would carry out without care
  EXPECT_EQ(f32_to_bf16(std::numeric_limits<float>::quiet_NaN()), 0x7FC0);
  EXPECT_TRUE(std::isnan(bf16_to_f32(0x7F81)));
}

TEST(Bf16, RoundTripsEveryNonNanValue) {
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    const auto bf = static_cast<uint16_t>(b);
    const float f = bf16_to_f32(bf);
    EXPECT_EQ(f32_to_bf16(f), std::isnan(f) ? (bf | 0x0040) : bf) << std::hex << b;
  }
}

}  // namespace
}  // namespace met
