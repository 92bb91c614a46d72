// Tests for Sampler (src/sampling/sampler.h).
#include "sampling/sampler.h"

#include <map>

#include <gtest/gtest.h>

namespace met {
namespace {

const std::vector<float> kLogits = {1.0f, 3.0f, 2.0f, 3.0f, -1.0f};

TEST(Sampler, GreedyPicksTheFirstLargest) {
  Sampler s(SamplingParams{});
  EXPECT_EQ(s.sample(kLogits), 1);
}

TEST(Sampler, TopKOfOneIsGreedyAtAnyTemperature) {
  Sampler s(SamplingParams{.temperature = 5.0f, .top_k = 1});
  for (int i = 0; i < 20; ++i) EXPECT_EQ(s.sample(kLogits), 1);
}

TEST(Sampler, SameSeedGivesTheSameDraws) {
  SamplingParams p{.temperature = 1.0f, .seed = 1234};
  Sampler a(p), b(p);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(a.sample(kLogits), b.sample(kLogits));
}

TEST(Sampler, TopKNeverDrawsOutsideTheK) {
  Sampler s(SamplingParams{.temperature = 10.0f, .top_k = 2, .seed = 7});
  for (int i = 0; i < 500; ++i) {
    const TokenId t = s.sample(kLogits);
    EXPECT_TRUE(t == 1 || t == 3) << t;
  }
}

TEST(Sampler, TopPKeepsTheSmallestNucleus) {
  // Probabilities ∝ e^3, e^3, e^2, e^1, e^-1: the two e^3 tokens hold 0.61.
  Sampler s(SamplingParams{.temperature = 1.0f, .top_p = 0.6f, .seed = 3});
  for (int i = 0; i < 500; ++i) {
    const TokenId t = s.sample(kLogits);
    EXPECT_TRUE(t == 1 || t == 3) << t;
  }
}

TEST(Sampler, DrawsFollowTheSoftmax) {
  const std::vector<float> logits = {0.0f, std::log(3.0f)};  // p = 0.25, 0.75
  Sampler s(SamplingParams{.temperature = 1.0f, .seed = 99});
  int ones = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) ones += s.sample(logits) == 1;
  EXPECT_NEAR(static_cast<double>(ones) / n, 0.75, 0.02);  // > 6 standard deviations
}

TEST(ValidateSampling, NamesTheParameterOutOfRange) {
  EXPECT_NE(validate_sampling({.temperature = -1.0f}).message().find("temperature"), std::string::npos);
  EXPECT_NE(validate_sampling({.top_k = -2}).message().find("top_k"), std::string::npos);
  EXPECT_NE(validate_sampling({.top_p = 0.0f}).message().find("top_p"), std::string::npos);
  EXPECT_TRUE(validate_sampling({.temperature = 0.7f, .top_k = 40, .top_p = 0.9f}).ok());
}

}  // namespace
}  // namespace met
