// Tests for AdaptiveTemperature (src/sampling/adaptive_temperature.h).
#include "sampling/adaptive_temperature.h"

#include <cmath>

#include <gtest/gtest.h>

namespace met {
namespace {

const SamplingParams kParams{.temperature = 1.0f,
                             .adaptive_temperature = true,
                             .adaptive_confidence = 0.9f,
                             .adaptive_decay = 0.5f,
                             .adaptive_min_ratio = 0.2f,
                             .adaptive_entropy_spike = 1.0f};

std::vector<float> confident() { return {10.0f, 0.0f, 0.0f, 0.0f}; }  // p1 ~ 0.9999
std::vector<float> flat(size_t n) { return std::vector<float>(n, 0.0f); }

TEST(AdaptiveTemperature, CoolsGeometricallyOverConfidentTokensDownToTheFloor) {
  AdaptiveTemperature a(kParams);
  EXPECT_FLOAT_EQ(a.next(confident()), 0.5f);
  EXPECT_FLOAT_EQ(a.next(confident()), 0.25f);
  EXPECT_FLOAT_EQ(a.next(confident()), 0.2f);  // floor = 1.0 * 0.2
  EXPECT_FLOAT_EQ(a.next(confident()), 0.2f);
}

TEST(AdaptiveTemperature, AnEntropySpikeRestoresTheRequestTemperature) {
  AdaptiveTemperature a(kParams);
  for (int i = 0; i < 4; ++i) a.next(confident());
  EXPECT_FLOAT_EQ(a.current(), 0.2f);
  EXPECT_FLOAT_EQ(a.next(flat(64)), 1.0f);  // H = log 64 ≈ 4.2 nats, far above the average
}

TEST(AdaptiveTemperature, UnsureButSteadyTokensRelaxBackTowardsTheRequestTemperature) {
  AdaptiveTemperature a(kParams);
  const std::vector<float> unsure = {1.0f, 0.8f, 0.0f, 0.0f};  // p1 < 0.9, steady entropy
  for (int i = 0; i < 3; ++i) a.next(unsure);
  for (int i = 0; i < 3; ++i) a.next(confident());
  EXPECT_FLOAT_EQ(a.current(), 0.2f);
  // The confident run pulled the average entropy down, but an unsure row
  // whose entropy stays within the spike margin only relaxes.
  const float t1 = a.next(unsure);
  EXPECT_GT(t1, 0.2f);
  EXPECT_LE(t1, 1.0f);
  for (int i = 0; i < 10; ++i) a.next(unsure);
  EXPECT_FLOAT_EQ(a.current(), 1.0f);
}

}  // namespace
}  // namespace met
