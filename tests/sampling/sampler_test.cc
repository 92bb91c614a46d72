// Tests for Sampler (src/sampling/sampler.h).
#include "sampling/sampler.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include <gtest/gtest.h>

#include "testing/random_data.h"

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

// Chi-square of `n` draws against the expected probabilities; cells with
// probability 0 must never be drawn.
double chi_square(Sampler& s, const std::vector<float>& logits, const std::vector<double>& expected, int n) {
  std::vector<int> counts(logits.size(), 0);
  for (int i = 0; i < n; ++i) ++counts[static_cast<size_t>(s.sample(logits))];
  double chi = 0.0;
  for (size_t i = 0; i < logits.size(); ++i) {
    if (expected[i] == 0.0) {
      EXPECT_EQ(counts[i], 0) << "token " << i;
      continue;
    }
    const double e = expected[i] * n;
    chi += (counts[i] - e) * (counts[i] - e) / e;
  }
  return chi;
}

std::vector<double> normalized(std::vector<double> w) {
  double total = 0.0;
  for (double x : w) total += x;
  for (double& x : w) x /= total;
  return w;
}

// A fixed distribution: p ∝ 8, 6, 4, 3, 2, 1, 1, 0.5 (sorted, no ties).
const std::vector<float> kFixed = {std::log(8.0f), std::log(6.0f), std::log(4.0f), std::log(3.0f),
                                   std::log(2.0f), std::log(1.0f), std::log(0.999f), std::log(0.5f)};
const std::vector<double> kFixedWeights = {8, 6, 4, 3, 2, 1, 0.999, 0.5};
// 7 degrees of freedom: 50 is far past the 1e-7 tail; the seed is fixed too.
constexpr double kCritical = 50.0;
constexpr int kDraws = 10000;

TEST(SamplerDistribution, TemperatureSharpensTheSoftmax) {
  Sampler s(SamplingParams{.temperature = 0.5f, .seed = 11});
  std::vector<double> w;
  for (double x : kFixedWeights) w.push_back(x * x);  // p^(1/0.5)
  EXPECT_LT(chi_square(s, kFixed, normalized(w), kDraws), kCritical);
}

TEST(SamplerDistribution, TopKRenormalizesOverTheK) {
  Sampler s(SamplingParams{.temperature = 1.0f, .top_k = 3, .seed = 12});
  EXPECT_LT(chi_square(s, kFixed, normalized({8, 6, 4, 0, 0, 0, 0, 0}), kDraws), kCritical);
}

TEST(SamplerDistribution, TopPKeepsTheNucleus) {
  // Masses 0.31, 0.23, 0.15, ...: 0.6 is reached by the third token.
  Sampler s(SamplingParams{.temperature = 1.0f, .top_p = 0.6f, .seed = 13});
  EXPECT_LT(chi_square(s, kFixed, normalized({8, 6, 4, 0, 0, 0, 0, 0}), kDraws), kCritical);
}

TEST(SamplerDistribution, MinPKeepsTokensAboveTheScaledTop) {
  SamplingParams p{.temperature = 1.0f, .seed = 14};
  p.min_p = 0.3f;  // keeps p >= 0.3 * p_max, i.e. weights >= 2.4
  Sampler s(p);
  EXPECT_LT(chi_square(s, kFixed, normalized({8, 6, 4, 3, 0, 0, 0, 0}), kDraws), kCritical);
}

TEST(SamplerDistribution, TypicalPKeepsTheMostTypicalTokens) {
  SamplingParams p{.temperature = 1.0f, .seed = 15};
  p.typical_p = 0.5f;
  // Reference: order by |-log p - H|, keep until the mass reaches 0.5.
  const std::vector<double> probs = normalized(kFixedWeights);
  double h = 0.0;
  for (double q : probs) h -= q * std::log(q);
  std::vector<std::pair<double, size_t>> order;
  for (size_t i = 0; i < probs.size(); ++i) order.emplace_back(std::abs(-std::log(probs[i]) - h), i);
  std::sort(order.begin(), order.end());
  std::vector<double> kept(probs.size(), 0.0);
  double cum = 0.0;
  for (auto [score, i] : order) {
    kept[i] = kFixedWeights[i];
    cum += probs[i];
    if (cum >= 0.5) break;
  }
  Sampler s(p);
  EXPECT_LT(chi_square(s, kFixed, normalized(kept), kDraws), kCritical);
}

TEST(SamplerDistribution, TopNSigmaKeepsTokensNearTheMax) {
  SamplingParams p{.temperature = 1.0f, .seed = 16};
  p.top_n_sigma = 1.0f;
  double mean = 0.0, sq = 0.0;
  for (float l : kFixed) mean += l;
  mean /= static_cast<double>(kFixed.size());
  for (float l : kFixed) sq += (l - mean) * (l - mean);
  const double cut = kFixed[0] - std::sqrt(sq / static_cast<double>(kFixed.size()));
  std::vector<double> kept;
  for (size_t i = 0; i < kFixed.size(); ++i) kept.push_back(kFixed[i] >= cut ? kFixedWeights[i] : 0.0);
  Sampler s(p);
  EXPECT_LT(chi_square(s, kFixed, normalized(kept), kDraws), kCritical);
}

std::vector<float> random_row(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  met::testing::NormalFloat normal(0.0f, 2.0f);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

SamplingParams full_chain(uint64_t seed) {
  SamplingParams p{.temperature = 0.8f, .top_k = 50, .top_p = 0.95f, .seed = seed};
  p.repetition_penalty = 1.1f;
  p.presence_penalty = 0.2f;
  p.frequency_penalty = 0.1f;
  p.dry_multiplier = 0.8f;
  p.lz_penalty = 0.2f;
  p.min_p = 0.02f;
  p.xtc_probability = 0.5f;
  p.logit_bias = {{.token = 3, .bias = 2.0f}};
  return p;
}

TEST(SamplerDeterminism, TheSameSeedGivesTheSameStreamAndAnotherSeedDiffers) {
  const std::vector<TokenId> prompt = {1, 2, 3, 4, 5};
  auto run = [&](uint64_t seed) {
    Sampler s(full_chain(seed));
    std::vector<TokenId> out;
    for (uint32_t i = 0; i < 64; ++i) {
      std::vector<float> row = random_row(1000, i);
      out.push_back(s.sample(row, prompt, out));
    }
    return out;
  };
  EXPECT_EQ(run(42), run(42));
  EXPECT_NE(run(42), run(43));
}

TEST(SamplerDeterminism, InterleavingSequencesDoesNotChangeAnyStream) {
  // A batch is a set of per-sequence samplers; the order rows are sampled in
  // must not matter.
  Sampler alone(full_chain(5));
  std::vector<TokenId> expected;
  for (uint32_t i = 0; i < 32; ++i) {
    std::vector<float> row = random_row(500, i);
    expected.push_back(alone.sample(row, {}, expected));
  }
  Sampler a(full_chain(5)), b(full_chain(6));
  std::vector<TokenId> got, other;
  for (uint32_t i = 0; i < 32; ++i) {
    std::vector<float> rb = random_row(500, 1000 + i);
    other.push_back(b.sample(rb, {}, other));
    std::vector<float> ra = random_row(500, i);
    got.push_back(a.sample(ra, {}, got));
  }
  EXPECT_EQ(got, expected);
}

TEST(Sampler, TopKOfOneEqualsGreedyOnRandomLogits) {
  for (uint32_t seed = 0; seed < 20; ++seed) {
    const std::vector<float> row = random_row(2000, seed);
    Sampler greedy(SamplingParams{});
    Sampler top1(SamplingParams{.temperature = 1.3f, .top_k = 1, .seed = seed});
    EXPECT_EQ(greedy.sample(row), top1.sample(row));
  }
}

TEST(Sampler, ABiasOfMinus100IsNeverPicked) {
  SamplingParams p{.temperature = 2.0f, .seed = 8};
  p.logit_bias = {{.token = 1, .bias = -100.0f}, {.token = 3, .bias = -100.0f}};
  Sampler s(p);
  EXPECT_FALSE(s.is_greedy());
  for (int i = 0; i < 2000; ++i) {
    const TokenId t = s.sample(kLogits);
    EXPECT_NE(t, 1);
    EXPECT_NE(t, 3);
  }
}

TEST(Sampler, AllowedTokenIdsAreTheOnlyOnesDrawn) {
  SamplingParams p{.temperature = 5.0f, .seed = 9};
  p.allowed_token_ids = std::vector<TokenId>{0, 4};
  Sampler s(p);
  for (int i = 0; i < 2000; ++i) {
    const TokenId t = s.sample(kLogits);
    EXPECT_TRUE(t == 0 || t == 4) << t;
  }
}

TEST(Sampler, BadWordsNeverCompleteInTheOutput) {
  SamplingParams p{.temperature = 0.0f};
  p.bad_words = {{2, 1}};
  Sampler s(p);
  std::vector<float> row = kLogits;
  const std::vector<TokenId> output = {0, 2};
  EXPECT_EQ(s.sample(row, {}, output), 3);  // 1 is banned; 3 ties with it
}

TEST(Sampler, IsGreedyOnlyWhenTheArgmaxOfTheRawLogitsIsThePick) {
  EXPECT_TRUE(Sampler(SamplingParams{}).is_greedy());
  EXPECT_TRUE(Sampler(SamplingParams{.temperature = 1.0f, .top_k = 1}).is_greedy());
  EXPECT_FALSE(Sampler(SamplingParams{.temperature = 1.0f}).is_greedy());
  SamplingParams penalized;
  penalized.presence_penalty = 0.5f;
  EXPECT_FALSE(Sampler(penalized).is_greedy());
}

TEST(Sampler, PenaltiesUseTheHistoryPassedIn) {
  // Greedy with a frequency penalty: token 1 was output twice, so 3 wins.
  SamplingParams p;
  p.frequency_penalty = 0.5f;
  Sampler s(p);
  std::vector<float> row = kLogits;
  const std::vector<TokenId> output = {1, 1};
  EXPECT_EQ(s.sample(row, {}, output), 3);
}

TEST(Sampler, AdaptiveTemperatureIsOptIn) {
  SamplingParams p{.temperature = 1.0f, .seed = 4};
  p.adaptive_temperature = true;
  Sampler adaptive(p);
  Sampler plain(SamplingParams{.temperature = 1.0f, .seed = 4});
  // A confident row cools the adaptive sampler; both still draw valid ids.
  const std::vector<float> confident = {12.0f, 0.0f, 0.0f};
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(adaptive.sample(confident), 0);
    EXPECT_LT(plain.sample(confident), 3);
  }
}

}  // namespace
}  // namespace met
