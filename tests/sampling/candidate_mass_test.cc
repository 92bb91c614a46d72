// Tests for the vectorized passes (src/sampling/candidate_mass.h,
// src/sampling/avx2_exp.h), each against a scalar double reference on
// random rows with ties, -inf entries and sizes around the vector width.
#include "sampling/candidate_mass.h"

#include <algorithm>
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "sampling/avx2_exp.h"
#include "testing/random_data.h"

namespace met {
namespace {

constexpr float kNegInf = -INFINITY;

// Logits with scale `spread`, a fraction of them banned (-inf) and, when
// `coarse`, rounded to quarters so that many tie.
std::vector<Candidate> random_row(size_t n, uint32_t seed, float spread, bool coarse) {
  std::mt19937 rng(seed);
  met::testing::NormalFloat normal(0.0f, spread);
  std::uniform_int_distribution<int> banned(0, 19);
  std::vector<Candidate> row(n);
  for (size_t i = 0; i < n; ++i) {
    float x = normal(rng);
    if (coarse) x = std::round(x * 4.0f) / 4.0f;
    if (banned(rng) == 0) x = kNegInf;
    row[i] = {x, static_cast<TokenId>(i)};
  }
  if (n > 0) row[n / 2].logit = coarse ? 1.0f : 0.5f;  // at least one finite
  return row;
}

double reference_mass(const std::vector<Candidate>& row, float max) {
  double total = 0.0;
  for (const Candidate& c : row) total += std::exp(static_cast<double>(c.logit - max));
  return total;
}

TEST(Avx2Exp, MatchesStdExpAndIsZeroBelowItsRange) {
  alignas(32) float in[8];
  alignas(32) float out[8];
  for (float x = -90.0f; x <= 0.0f; x += 0.0137f) {
    for (int j = 0; j < 8; ++j) in[j] = std::min(0.0f, x + 0.001f * static_cast<float>(j));
    _mm256_store_ps(out, avx2::exp_nonpositive(_mm256_load_ps(in)));
    for (int j = 0; j < 8; ++j) {
      if (in[j] < -87.0f) {
        EXPECT_EQ(out[j], 0.0f) << in[j];
      } else {
        const double e = std::exp(static_cast<double>(in[j]));
        EXPECT_NEAR(out[j], e, 1e-5 * e) << in[j];
      }
    }
  }
  for (float& x : in) x = kNegInf;
  _mm256_store_ps(out, avx2::exp_nonpositive(_mm256_load_ps(in)));
  for (float y : out) EXPECT_EQ(y, 0.0f);
}

TEST(CandidateMass, MaxAndMassMatchTheScalarReference) {
  for (size_t n : {1u, 7u, 8u, 9u, 63u, 64u, 65u, 1000u, 32000u}) {
    for (uint32_t seed = 0; seed < 4; ++seed) {
      const auto row = random_row(n, seed, 3.0f, seed % 2 == 0);
      float max = kNegInf;
      for (const Candidate& c : row) max = std::max(max, c.logit);
      ASSERT_EQ(max_logit_of(row), max) << n;
      EXPECT_NEAR(exp_mass(row, max), reference_mass(row, max), 1e-5 * reference_mass(row, max)) << n;
    }
  }
}

TEST(CandidateMass, TheFloorHoldsTheTargetMass) {
  for (size_t n : {300u, 1000u, 5000u, 32000u}) {
    for (float spread : {0.01f, 1.0f, 3.0f, 30.0f, 3000.0f}) {
      for (double p : {0.1, 0.5, 0.9, 0.95, 0.999}) {
        const auto row = random_row(n, static_cast<uint32_t>(n) + 7, spread, spread == 1.0f);
        const float max = max_logit_of(row);
        const double total = exp_mass(row, max);
        const auto floor = floor_of_mass(row, max, total, p * total);
        if (!floor.has_value()) continue;  // allowed: then every candidate is searched
        double above = 0.0;
        for (const Candidate& c : row) {
          if (c.logit >= *floor) above += std::exp(static_cast<double>(c.logit - max));
        }
        EXPECT_GE(above, p * reference_mass(row, max) * (1.0 - 2e-5)) << n << " " << spread << " " << p;
      }
    }
  }
}

TEST(CandidateMass, PickByMassMatchesASequentialWalkAwayFromRounding) {
  std::mt19937_64 rng(5);
  for (size_t n : {9u, 100u, 1001u, 32000u}) {
    const auto row = random_row(n, static_cast<uint32_t>(n), 2.0f, false);
    const float max = max_logit_of(row);
    const double total = reference_mass(row, max);
    for (int draw = 0; draw < 200; ++draw) {
      const double r = std::uniform_real_distribution<double>(0.0, 1.0)(rng) * total;
      double remaining = r;
      TokenId expected = row[0].id;
      double margin = INFINITY;
      for (const Candidate& c : row) {
        const double w = std::exp(static_cast<double>(c.logit - max));
        if (w <= 0.0) continue;
        expected = c.id;
        margin = std::min(std::abs(remaining - w), w);
        remaining -= w;
        if (remaining <= 0.0) break;
      }
      if (margin < 3e-5 * total) continue;  // within the weights' rounding of a boundary
      EXPECT_EQ(pick_by_mass(row, max, r), expected) << n << " " << draw;
    }
  }
}

}  // namespace
}  // namespace met
