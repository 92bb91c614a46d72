// Tests for core/vector_exp.h against std::exp, on every ISA the CPU has.
#include "core/vector_exp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/cpu_features.h"

namespace met {
namespace {

std::vector<float> exp_avx2_of(const std::vector<float>& in) {
  std::vector<float> out(in.size());
  for (size_t i = 0; i + 8 <= in.size(); i += 8) _mm256_storeu_ps(&out[i], exp_avx2(_mm256_loadu_ps(&in[i])));
  return out;
}

__attribute__((target("avx512f"))) std::vector<float> exp_avx512_of(const std::vector<float>& in) {
  std::vector<float> out(in.size());
  for (size_t i = 0; i + 16 <= in.size(); i += 16) _mm512_storeu_ps(&out[i], exp_avx512(_mm512_loadu_ps(&in[i])));
  return out;
}

// Every x from lo to hi in small steps, padded to a multiple of 16 lanes.
std::vector<float> grid(float lo, float hi) {
  std::vector<float> v;
  for (float x = lo; x <= hi; x += 0.00731f) v.push_back(x);
  while (v.size() % 16 != 0) v.push_back(hi);
  return v;
}

double worst_relative_error(const std::vector<float>& in, const std::vector<float>& out) {
  double worst = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const double e = std::exp(static_cast<double>(in[i]));
    worst = std::max(worst, std::abs(out[i] - e) / e);
  }
  return worst;
}

struct Tier {
  const char* name;
  std::vector<float> (*fn)(const std::vector<float>&);
  bool supported;
};

std::vector<Tier> tiers() {
  const CpuFeatures& f = detect_cpu_features();
  return {{"avx2", exp_avx2_of, f.avx2 && f.fma},
          {"avx512", exp_avx512_of, f.avx512f}};
}

TEST(VectorExp, IsWithinItsStatedAccuracyWhereTheResultIsANormalFloat) {
  for (const Tier& t : tiers()) {
    if (!t.supported) continue;
    const std::vector<float> in = grid(-87.33f, 88.37f);
    EXPECT_LT(worst_relative_error(in, t.fn(in)), 2e-7) << t.name;
    const std::vector<float> top = grid(88.37f, 88.72f);
    EXPECT_LT(worst_relative_error(top, t.fn(top)), 1e-5) << t.name;
  }
}

TEST(VectorExp, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> in = {0.0f, -inf, inf, nan, 89.0f, -200.0f, 1.0f, -1.0f};
  in.resize(16, 0.0f);
  for (const Tier& t : tiers()) {
    if (!t.supported) continue;
    const std::vector<float> out = t.fn(in);
    EXPECT_EQ(out[0], 1.0f) << t.name;
    EXPECT_EQ(out[1], 0.0f) << t.name;
    EXPECT_EQ(out[2], inf) << t.name;
    EXPECT_TRUE(std::isnan(out[3])) << t.name;
    EXPECT_EQ(out[4], inf) << t.name;
    EXPECT_EQ(out[5], 0.0f) << t.name;
    EXPECT_NEAR(out[6], std::exp(1.0), 2e-7 * std::exp(1.0)) << t.name;
  }
}

TEST(VectorExp, Avx2IsZeroBelowTheSmallestNormalResult) {
  std::vector<float> in = grid(-95.0f, -87.34f);
  for (float y : exp_avx2_of(in)) EXPECT_EQ(y, 0.0f);
}

}  // namespace
}  // namespace met
