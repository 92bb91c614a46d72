// Tests for ops.h: the scalar references on hand-checked cases (RoPE angles,
// NeoX halves, linear and YaRN scaling, softmax, argmax ties and NaN), and
// every ISA tier the CPU has against them on random rows of odd lengths.
// Tolerances (relative to the reference value, plus an absolute floor):
//   add, rope: bit for bit (same float operations, no contraction).
//   rms_norm and l2_norm 1e-5: the sum of squares runs in float lanes (the
//     reference in double); the output's error is half the sum's.
//   rms_norm_gated 1e-5: rms_norm's, and the silu's vector exp (2e-6).
//   swiglu 2e-6, softmax 4e-6: the vector exp is within a few ulps of
//     std::exp; softmax adds a float sum. Floor 1e-37: the AVX2 exp returns
//     0 below e^-86.5 where std::exp gives a subnormal.
//   argmax: exact.
#include "backend/cpu/kernels/ops.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/kernels/ops_kernels.h"
#include "backend/cpu/kernels/reference/kernels_ref.h"
#include "core/cpu_features.h"
#include "gguf/ggml_type.h"
#include "tensor/quantize.h"
#include "tensor/reference/reference_kernels.h"
#include "tensor/row_kernels.h"
#include "tensor/tensor_testing.h"
#include "testing/random_data.h"

namespace met::cpu {
namespace {

constexpr int64_t kLengths[] = {1, 3, 7, 8, 15, 16, 17, 31, 33, 100, 1000, 4097};

using testing::gaussian;

std::vector<uint32_t> bits_of(const std::vector<float>& v) {
  std::vector<uint32_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = std::bit_cast<uint32_t>(v[i]);
  return out;
}

void expect_close(const std::vector<float>& actual, const std::vector<float>& expected,
                  double relative, double absolute, const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size());
  int failures = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    const double bound = relative * std::fabs(expected[i]) + absolute;
    const bool same_nan = std::isnan(actual[i]) && std::isnan(expected[i]);
    if (!same_nan && !(std::fabs(static_cast<double>(actual[i]) - expected[i]) <= bound) &&
        ++failures < 5) {
      ADD_FAILURE() << what << " [" << i << "] = " << actual[i] << ", reference " << expected[i];
    }
  }
}

RopeParams rope_params(int32_t head_dim, int32_t rope_dims, RopeLayout layout) {
  RopeParams p;
  p.head_dim = head_dim;
  p.rope_dims = rope_dims;
  p.layout = layout;
  return p;
}

TEST(OpsReference, RmsNormOfAConstantRowIsTheWeight) {
  const std::vector<float> x(10, -3.0f), weight = gaussian(10, 1);
  std::vector<float> out(10);
  ref::rms_norm(x.data(), weight.data(), 10, 0.0f, out.data());
  for (int i = 0; i < 10; ++i) EXPECT_FLOAT_EQ(out[static_cast<size_t>(i)], -weight[static_cast<size_t>(i)]);
}

TEST(OpsReference, RmsNormGatedAndL2NormOnKnownValues) {
  // x = (3, 4): rms = sqrt(12.5), l2 = 5.
  const std::vector<float> x = {3.0f, 4.0f}, weight = {2.0f, 0.5f}, z = {0.0f, 1.0f};
  std::vector<float> out(2);
  ref::rms_norm_gated(x.data(), weight.data(), z.data(), 2, 0.0f, out.data());
  EXPECT_EQ(out[0], 0.0f) << "silu(0) = 0 gates the first element off";
  EXPECT_NEAR(out[1], 4.0 / std::sqrt(12.5) * 0.5 * (1.0 / (1.0 + std::exp(-1.0))), 1e-6);
  std::vector<float> y = x;
  ref::l2_norm(y.data(), 2, 1e-6f);
  EXPECT_FLOAT_EQ(y[0], 0.6f);
  EXPECT_FLOAT_EQ(y[1], 0.8f);
  std::vector<float> tiny = {1e-9f, 0.0f};
  ref::l2_norm(tiny.data(), 2, 1e-6f);
  EXPECT_FLOAT_EQ(tiny[0], 1e-3f) << "a norm below eps divides by eps";
}

TEST(OpsReference, RopeAtPositionZeroIsTheIdentity) {
  for (const RopeLayout layout : {RopeLayout::kNormal, RopeLayout::kNeox}) {
    std::vector<float> x = gaussian(2 * 64, 2);
    const std::vector<float> before = x;
    ref::rope(x.data(), 2, 0, rope_params(64, 64, layout));
    EXPECT_EQ(x, before);
  }
}

TEST(OpsReference, RopeRotatesAdjacentPairsByPosTimesTheirFrequency) {
  const RopeParams p = rope_params(8, 8, RopeLayout::kNormal);
  std::vector<float> x = {1, 0, 1, 0, 0, 1, 0, 1};
  ref::rope(x.data(), 1, 3, p);
  for (int i = 0; i < 4; ++i) {
    const double theta = 3.0 * std::pow(10000.0, -2.0 * i / 8);
    const double x0 = i < 2 ? 1.0 : 0.0, x1 = i < 2 ? 0.0 : 1.0;
    EXPECT_NEAR(x[static_cast<size_t>(2 * i)], x0 * std::cos(theta) - x1 * std::sin(theta), 1e-6) << i;
    EXPECT_NEAR(x[static_cast<size_t>(2 * i + 1)], x0 * std::sin(theta) + x1 * std::cos(theta), 1e-6) << i;
  }
}

TEST(OpsReference, RopeNeoxPairsTheTwoHalvesAndLeavesTheRestAlone) {
  // head_dim 12, rope_dims 8: pairs (0,4) (1,5) (2,6) (3,7); 8..11 untouched.
  std::vector<float> x(12);
  for (int i = 0; i < 12; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i + 1);
  ref::rope(x.data(), 1, 5, rope_params(12, 8, RopeLayout::kNeox));
  for (int i = 0; i < 4; ++i) {
    const double theta = 5.0 * std::pow(10000.0, -2.0 * i / 8);
    const double x0 = i + 1, x1 = i + 5;
    EXPECT_NEAR(x[static_cast<size_t>(i)], x0 * std::cos(theta) - x1 * std::sin(theta), 1e-5) << i;
    EXPECT_NEAR(x[static_cast<size_t>(i + 4)], x0 * std::sin(theta) + x1 * std::cos(theta), 1e-5) << i;
  }
  for (int i = 8; i < 12; ++i) EXPECT_EQ(x[static_cast<size_t>(i)], static_cast<float>(i + 1));
}

TEST(OpsReference, LinearScalingDividesThePosition) {
  RopeParams scaled = rope_params(16, 16, RopeLayout::kNormal);
  scaled.freq_scale = 0.25f;
  std::vector<float> a = gaussian(16, 3), b = a;
  ref::rope(a.data(), 1, 40, scaled);
  ref::rope(b.data(), 1, 10, rope_params(16, 16, RopeLayout::kNormal));
  for (size_t i = 0; i < 16; ++i) EXPECT_NEAR(a[i], b[i], 1e-5) << i;
}

TEST(OpsReference, YarnExtrapolatesFastPairsInterpolatesSlowOnesAndScalesMagnitude) {
  RopeParams p = rope_params(128, 128, RopeLayout::kNormal);
  p.freq_scale = 0.25f;
  p.ext_factor = 1.0f;
  p.attn_factor = 1.0f;
  p.original_context = 4096;
  std::vector<float> cos_sin(128);
  ref::rope_cache(1000, p, cos_sin.data());
  const double mscale = 1.0 + 0.1 * std::log(4.0);
  // Correction dims: pairs below floor(dim(beta_fast)) keep the original
  // angle; pairs above ceil(dim(beta_slow)) take the interpolated one.
  auto corr_dim = [](double beta) {
    return 128.0 * std::log(4096.0 / (beta * 2.0 * std::numbers::pi)) / (2.0 * std::log(10000.0));
  };
  const int low = static_cast<int>(std::floor(corr_dim(32.0)));
  const int high = static_cast<int>(std::ceil(corr_dim(1.0)));
  ASSERT_LT(low, high);
  for (int i = 0; i < 64; ++i) {
    const double extrapolated = 1000.0 * std::pow(10000.0, -2.0 * i / 128);
    const double c = cos_sin[static_cast<size_t>(2 * i)], s = cos_sin[static_cast<size_t>(2 * i + 1)];
    EXPECT_NEAR(std::hypot(c, s), mscale, 1e-5) << i;
    if (i <= low) {
      EXPECT_NEAR(c, std::cos(extrapolated) * mscale, 2e-4) << i;
    } else if (i >= high) {
      EXPECT_NEAR(c, std::cos(0.25 * extrapolated) * mscale, 2e-4) << i;
    }
  }
}

TEST(OpsReference, SwigluSoftmaxAndAddOnKnownValues) {
  const std::vector<float> gate = {0.0f, 1.0f, -2.0f}, up = {5.0f, 2.0f, 3.0f};
  std::vector<float> out(3);
  ref::swiglu(gate.data(), up.data(), 3, out.data());
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_NEAR(out[1], 2.0 / (1.0 + std::exp(-1.0)), 1e-6);
  EXPECT_NEAR(out[2], 3.0 * -2.0 / (1.0 + std::exp(2.0)), 1e-6);
  std::vector<float> x = {1.0f, 2.0f, 3.0f, -std::numeric_limits<float>::infinity()};
  ref::softmax(x.data(), 4);
  const double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  EXPECT_NEAR(x[0], std::exp(1.0) / z, 1e-7);
  EXPECT_NEAR(x[2], std::exp(3.0) / z, 1e-7);
  EXPECT_EQ(x[3], 0.0f);
  ref::add(gate.data(), up.data(), 3, out.data());
  EXPECT_EQ(out, (std::vector<float>{5.0f, 3.0f, 1.0f}));
}

// gpt-oss's clamped SwiGLU against its definition (ggml's swiglu_oai):
// the gate clamped above at 7, the up input to [-7, 7], alpha 1.702.
TEST(Ops, SwigluOaiClampsAsGptOssDefinesIt) {
  const std::vector<float> gate = {-20.0f, -1.5f, 0.0f, 0.75f, 6.5f, 7.0f, 12.0f, 100.0f};
  const std::vector<float> up = {-30.0f, 8.0f, 2.0f, -0.5f, -7.5f, 3.0f, 7.0f, 1e6f};
  std::vector<float> out(gate.size());
  swiglu_oai(gate.data(), up.data(), static_cast<int64_t>(gate.size()), out.data());
  for (size_t i = 0; i < gate.size(); ++i) {
    const double g = std::min<double>(gate[i], 7.0), u = std::clamp<double>(up[i], -7.0, 7.0);
    const double want = g / (1.0 + std::exp(-1.702 * g)) * (u + 1.0);
    EXPECT_NEAR(out[i], want, 1e-5 * (1.0 + std::fabs(want))) << "gate " << gate[i] << ", up " << up[i];
  }
  EXPECT_EQ(out[6], out[7]) << "a gate over 7 acts as 7, and an up over 7 as 7";
  std::vector<float> in_place = gate;
  swiglu_oai(in_place.data(), up.data(), static_cast<int64_t>(gate.size()), in_place.data());
  EXPECT_EQ(in_place, out);
}

TEST(OpsReference, ArgmaxTakesTheFirstOnTiesAndNaNNeverWins) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(ref::argmax(std::vector<float>{1, 3, 3, 2}.data(), 4), 1);
  EXPECT_EQ(ref::argmax(std::vector<float>{nan, -inf, nan}.data(), 3), 1);
  EXPECT_EQ(ref::argmax(std::vector<float>{nan, nan}.data(), 2), 0);
  EXPECT_EQ(ref::argmax(std::vector<float>{-inf, -inf}.data(), 2), 0);
}

TEST(Ops, EmbeddingRowDecodesEveryDequantizableType) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> byte(0, 255);
  int checked = 0;
  for (uint32_t id = 0; id < 64; ++id) {
    const auto traits = ggml_type_traits(id);
    if (!traits.has_value() || !can_dequantize(traits->type)) continue;
    const GgmlType type = traits->type;
    const int64_t cols = 2 * 256;
    const size_t row_bytes = *ggml_row_bytes(type, cols);
    std::vector<uint8_t> table(3 * row_bytes);
    for (uint8_t& b : table) b = static_cast<uint8_t>(byte(rng));
    std::vector<float> out(static_cast<size_t>(cols)), expected(static_cast<size_t>(cols));
    embedding_row(type, table.data(), cols, 2, out.data());
    ASSERT_TRUE(dequantize_row(type, std::span<const uint8_t>(table.data() + 2 * row_bytes, row_bytes),
                               expected)
                    .ok());
    EXPECT_EQ(bits_of(out), bits_of(expected)) << ggml_type_name(type);
    ++checked;
  }
  EXPECT_GE(checked, 7);
}

TEST(Ops, PublicEntryPointsRunTheSelectedKernels) {
  const std::vector<float> a = gaussian(50, 1), b = gaussian(50, 2);
  std::vector<float> out(50), expected(50);
  add(a.data(), b.data(), 50, out.data());
  ref::add(a.data(), b.data(), 50, expected.data());
  EXPECT_EQ(out, expected);
  std::vector<float> x = gaussian(2 * 128, 3), y = x;
  const RopeParams p = rope_params(128, 96, RopeLayout::kNeox);
  rope(x.data(), 2, 77, p);
  ref::rope(y.data(), 2, 77, p);
  EXPECT_EQ(bits_of(x), bits_of(y));
  EXPECT_EQ(argmax(a.data(), 50), ref::argmax(a.data(), 50));
  std::vector<float> gated(50), gated_ref(50), norm = a, norm_ref = a;
  rms_norm_gated(a.data(), b.data(), b.data(), 50, 1e-6f, gated.data());
  selected_ops_kernels().rms_norm_gated(a.data(), b.data(), b.data(), 50, 1e-6f, gated_ref.data());
  EXPECT_EQ(bits_of(gated), bits_of(gated_ref));
  l2_norm(norm.data(), 50, 1e-6f);
  selected_ops_kernels().l2_norm(norm_ref.data(), 50, 1e-6f);
  EXPECT_EQ(bits_of(norm), bits_of(norm_ref));
}

class OpsTiers : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!isa_supported(detect_cpu_features(), GetParam())) {
      GTEST_SKIP() << "this CPU lacks " << isa_name(GetParam()) << "; its kernels are not checked here";
    }
    kernels_ = ops_kernels_for_isa(GetParam());
    if (kernels_.add == nullptr) GTEST_SKIP() << isa_name(GetParam()) << " has no ops of its own";
  }
  OpsKernels kernels_;
};

TEST_P(OpsTiers, AddIsBitExactIncludingInPlace) {
  for (const int64_t n : kLengths) {
    const std::vector<float> a = gaussian(static_cast<size_t>(n), 1), b = gaussian(static_cast<size_t>(n), 2);
    std::vector<float> expected(a.size()), out(a.size());
    ref::add(a.data(), b.data(), n, expected.data());
    kernels_.add(a.data(), b.data(), n, out.data());
    EXPECT_EQ(bits_of(out), bits_of(expected)) << n;
    std::vector<float> in_place = a;
    kernels_.add(in_place.data(), b.data(), n, in_place.data());
    EXPECT_EQ(bits_of(in_place), bits_of(expected)) << n;
  }
}

TEST_P(OpsTiers, RopeRotationIsBitExact) {
  struct Case {
    int32_t head_dim, rope_dims;
    RopeLayout layout;
    float freq_base, freq_scale, ext_factor;
  };
  const Case cases[] = {
      {128, 128, RopeLayout::kNormal, 10000.0f, 1.0f, 0.0f},
      {128, 128, RopeLayout::kNeox, 1000000.0f, 1.0f, 0.0f},
      {64, 32, RopeLayout::kNeox, 10000.0f, 0.5f, 0.0f},
      {80, 80, RopeLayout::kNormal, 10000.0f, 1.0f, 0.0f},
      {96, 24, RopeLayout::kNormal, 500000.0f, 0.125f, 1.0f},
      {128, 128, RopeLayout::kNeox, 1000000.0f, 0.25f, 1.0f},
      {6, 6, RopeLayout::kNeox, 10000.0f, 1.0f, 0.0f},
      {10, 2, RopeLayout::kNormal, 10000.0f, 1.0f, 0.0f},
  };
  for (const Case& c : cases) {
    RopeParams p = rope_params(c.head_dim, c.rope_dims, c.layout);
    p.freq_base = c.freq_base;
    p.freq_scale = c.freq_scale;
    p.ext_factor = c.ext_factor;
    p.original_context = 8192;
    for (const int32_t pos : {0, 1, 17, 1000, 131071}) {
      std::vector<float> cos_sin(static_cast<size_t>(c.rope_dims));
      ref::rope_cache(pos, p, cos_sin.data());
      std::vector<float> x = gaussian(static_cast<size_t>(3 * c.head_dim), static_cast<uint32_t>(pos));
      std::vector<float> expected = x;
      const bool neox = c.layout == RopeLayout::kNeox;
      ref::rope_rotate(expected.data(), 3, c.head_dim, c.rope_dims, neox, cos_sin.data());
      kernels_.rope_rotate(x.data(), 3, c.head_dim, c.rope_dims, neox, cos_sin.data());
      EXPECT_EQ(bits_of(x), bits_of(expected)) << c.head_dim << "/" << c.rope_dims << " pos " << pos;
    }
  }
}

TEST_P(OpsTiers, RmsNormIsWithinTolerance) {
  for (const int64_t n : {1, 7, 17, 100, 4096, 8192}) {
    const std::vector<float> x = gaussian(static_cast<size_t>(n), 3, 30.0f);
    const std::vector<float> w = gaussian(static_cast<size_t>(n), 4);
    std::vector<float> expected(x.size()), out(x.size());
    ref::rms_norm(x.data(), w.data(), n, 1e-6f, expected.data());
    kernels_.rms_norm(x.data(), w.data(), n, 1e-6f, out.data());
    expect_close(out, expected, 1e-5, 1e-30, "rms_norm n=" + std::to_string(n));
    std::vector<float> in_place = x;
    kernels_.rms_norm(in_place.data(), w.data(), n, 1e-6f, in_place.data());
    EXPECT_EQ(bits_of(in_place), bits_of(out)) << n;
  }
}

TEST_P(OpsTiers, RmsNormGatedIsWithinTolerance) {
  for (const int64_t n : {1, 7, 17, 64, 128, 100, 4096}) {
    const std::vector<float> x = gaussian(static_cast<size_t>(n), 13, 30.0f);
    const std::vector<float> w = gaussian(static_cast<size_t>(n), 14);
    std::vector<float> z = gaussian(static_cast<size_t>(n), 15, 8.0f);
    const float extremes[] = {0.0f, 90.0f, -90.0f, 100.0f, -100.0f};
    for (size_t i = 0; i < z.size(); i += 4) z[i] = extremes[(i / 4) % 5];
    std::vector<float> expected(x.size()), out(x.size());
    ref::rms_norm_gated(x.data(), w.data(), z.data(), n, 1e-6f, expected.data());
    kernels_.rms_norm_gated(x.data(), w.data(), z.data(), n, 1e-6f, out.data());
    expect_close(out, expected, 1e-5, 1e-37, "rms_norm_gated n=" + std::to_string(n));
    std::vector<float> in_place = x;
    kernels_.rms_norm_gated(in_place.data(), w.data(), z.data(), n, 1e-6f, in_place.data());
    EXPECT_EQ(bits_of(in_place), bits_of(out)) << n;
    std::vector<float> over_z = z;
    kernels_.rms_norm_gated(x.data(), w.data(), over_z.data(), n, 1e-6f, over_z.data());
    EXPECT_EQ(bits_of(over_z), bits_of(out)) << n;
  }
}

TEST_P(OpsTiers, L2NormIsWithinTolerance) {
  for (const int64_t n : {1, 7, 17, 64, 128, 100, 4096}) {
    const std::vector<float> x = gaussian(static_cast<size_t>(n), 16, 3.0f);
    std::vector<float> expected = x, out = x;
    ref::l2_norm(expected.data(), n, 1e-6f);
    kernels_.l2_norm(out.data(), n, 1e-6f);
    expect_close(out, expected, 1e-5, 1e-30, "l2_norm n=" + std::to_string(n));
  }
  std::vector<float> zeros(9, 0.0f);
  kernels_.l2_norm(zeros.data(), 9, 1e-6f);
  EXPECT_EQ(zeros, std::vector<float>(9, 0.0f)) << "a zero row stays zero (eps, not 0, divides)";
}

TEST_P(OpsTiers, SwigluIsWithinTolerance) {
  for (const int64_t n : kLengths) {
    std::vector<float> gate = gaussian(static_cast<size_t>(n), 5, 8.0f);
    const std::vector<float> up = gaussian(static_cast<size_t>(n), 6);
    const float extremes[] = {0.0f, -0.0f, 90.0f, -90.0f, 100.0f, -100.0f, 88.0f, -88.5f, 1e-20f};
    for (size_t i = 0; i < gate.size(); i += 3) gate[i] = extremes[(i / 3) % 9];
    std::vector<float> expected(gate.size()), out(gate.size());
    ref::swiglu(gate.data(), up.data(), n, expected.data());
    kernels_.swiglu(gate.data(), up.data(), n, out.data());
    expect_close(out, expected, 2e-6, 1e-37, "swiglu n=" + std::to_string(n));
  }
}

// Gates and ups across the clamps (7, -7), the exp's overflow (a gate
// of -90 makes e^(1.702 x 90) inf: the gate's term goes to -0) and NaN.
TEST_P(OpsTiers, SwigluOaiIsWithinTolerance) {
  for (const int64_t n : kLengths) {
    std::vector<float> gate = gaussian(static_cast<size_t>(n), 5, 8.0f);
    std::vector<float> up = gaussian(static_cast<size_t>(n), 6, 8.0f);
    const float extremes[] = {0.0f, -0.0f, 7.0f, -7.0f, 90.0f, -90.0f, 7.5f, -7.5f, 1e-20f};
    for (size_t i = 0; i < gate.size(); i += 3) gate[i] = extremes[(i / 3) % 9];
    for (size_t i = 1; i < up.size(); i += 4) up[i] = extremes[(i / 4) % 9];
    std::vector<float> expected(gate.size()), out(gate.size());
    ref::swiglu_oai(gate.data(), up.data(), n, expected.data());
    kernels_.swiglu_oai(gate.data(), up.data(), n, out.data());
    expect_close(out, expected, 2e-6, 1e-37, "swiglu_oai n=" + std::to_string(n));
    std::vector<float> in_place = gate;
    kernels_.swiglu_oai(in_place.data(), up.data(), n, in_place.data());
    EXPECT_EQ(bits_of(in_place), bits_of(out)) << n;
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> gate = {nan, 1.0f}, up = {1.0f, nan};
  std::vector<float> out(2);
  kernels_.swiglu_oai(gate.data(), up.data(), 2, out.data());
  EXPECT_TRUE(std::isnan(out[0]) && std::isnan(out[1])) << "a NaN gate or up is not clamped to a number";
}

TEST_P(OpsTiers, SoftmaxIsWithinTolerance) {
  for (const int64_t n : kLengths) {
    std::vector<float> x = gaussian(static_cast<size_t>(n), 7, 10.0f);
    if (n > 4) x[3] = -std::numeric_limits<float>::infinity();
    std::vector<float> expected = x;
    ref::softmax(expected.data(), n);
    kernels_.softmax(x.data(), n);
    expect_close(x, expected, 4e-6, 1e-37, "softmax n=" + std::to_string(n));
  }
}

TEST_P(OpsTiers, ArgmaxMatchesTheReferenceExactly) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<std::vector<float>> rows = {
      {nan}, {nan, nan, nan}, {-inf}, {nan, -inf, nan}, {1, 3, 3, 2},
      {nan, 5, nan, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 6, 6}};
  for (const int64_t n : kLengths) {
    std::vector<float> x = gaussian(static_cast<size_t>(n), 8);
    rows.push_back(x);
    x[x.size() - 1] = 100.0f;  // the last element, in a tail
    rows.push_back(x);
    for (size_t i = 0; i < x.size(); i += 2) x[i] = nan;
    rows.push_back(x);
    std::vector<float> ties(static_cast<size_t>(n), 1.0f);
    ties[static_cast<size_t>(n / 2)] = 2.0f;
    if (n > 2) ties[static_cast<size_t>(n - 1)] = 2.0f;
    rows.push_back(ties);
  }
  for (const std::vector<float>& row : rows) {
    const auto n = static_cast<int64_t>(row.size());
    EXPECT_EQ(kernels_.argmax(row.data(), n), ref::argmax(row.data(), n)) << n;
  }
}

INSTANTIATE_TEST_SUITE_P(Tiers, OpsTiers, ::testing::Values(Isa::kAvx2, Isa::kAvx512, Isa::kAmx),
                         [](const ::testing::TestParamInfo<Isa>& tier) {
                           return std::string(isa_name(tier.param));
                         });

TEST(LayerNorm, CentresScalesThenAppliesWeightAndBiasAsDefined) {
  std::mt19937 rng(7);
  met::testing::NormalFloat d(0.5f, 3.0f);
  std::vector<float> x(384), w(384), b(384), out(384);
  for (size_t i = 0; i < x.size(); ++i) x[i] = d(rng), w[i] = d(rng), b[i] = d(rng);
  layer_norm(x.data(), w.data(), b.data(), 384, 1e-12f, out.data());
  double mean = 0.0, var = 0.0;
  for (float v : x) mean += v / 384.0;
  for (float v : x) var += (v - mean) * (v - mean) / 384.0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = (x[i] - mean) / std::sqrt(var + 1e-12) * w[i] + b[i];
    EXPECT_NEAR(out[i], want, 1e-4 * (1.0 + std::abs(want))) << i;
  }
  std::vector<float> same = x;
  layer_norm(same.data(), w.data(), b.data(), 384, 1e-12f, same.data());
  EXPECT_EQ(same, out) << "in place";
}

TEST(Gelu, IsTheTanhApproximationAndAgreesWithGegluTimesOne) {
  const std::vector<float> x = {-6.0f, -1.5f, -0.1f, 0.0f, 0.3f, 1.0f, 4.0f};
  std::vector<float> out(x.size()), ones(x.size(), 1.0f), via_geglu(x.size());
  gelu(x.data(), static_cast<int64_t>(x.size()), out.data());
  geglu(x.data(), ones.data(), static_cast<int64_t>(x.size()), via_geglu.data());
  for (size_t i = 0; i < x.size(); ++i) {
    const double g = x[i];
    const double want = 0.5 * g * (1.0 + std::tanh(std::sqrt(2.0 / std::numbers::pi) * (g + 0.044715 * g * g * g)));
    EXPECT_NEAR(out[i], want, 1e-6) << x[i];
    EXPECT_EQ(out[i], via_geglu[i]) << x[i];
  }
}

}  // namespace
}  // namespace met::cpu
