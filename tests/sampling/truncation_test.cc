// Tests for the truncation samplers (src/sampling/truncation.h), each
// against a straightforward reference over a full sort on random logits.
#include "sampling/truncation.h"
#include "testing/random_data.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include <gtest/gtest.h>

namespace met {
namespace {

struct Ref {
  std::vector<Candidate> sorted;
  std::vector<double> p;  // probabilities in sorted order
};

Ref reference(const std::vector<float>& logits) {
  Ref r;
  for (size_t i = 0; i < logits.size(); ++i) r.sorted.push_back({logits[i], static_cast<TokenId>(i)});
  std::sort(r.sorted.begin(), r.sorted.end(), ranks_before);
  double total = 0.0;
  for (const auto& c : r.sorted) total += std::exp(static_cast<double>(c.logit - r.sorted[0].logit));
  for (const auto& c : r.sorted) r.p.push_back(std::exp(static_cast<double>(c.logit - r.sorted[0].logit)) / total);
  return r;
}

std::set<TokenId> ids(const Candidates& c) {
  std::set<TokenId> s;
  for (const Candidate& x : c.items()) s.insert(x.id);
  return s;
}

TEST(TopP, KeepsTheSmallestNucleusReachingP) {
  for (uint32_t seed = 0; seed < 10; ++seed) {
    const auto logits = testing::gaussian(1000, seed, 2.0f);
    const Ref r = reference(logits);
    std::set<TokenId> expected;
    double cum = 0.0;
    for (size_t i = 0; i < r.sorted.size(); ++i) {
      expected.insert(r.sorted[i].id);
      cum += r.p[i];
      if (cum >= 0.9) break;
    }
    Candidates c;
    c.assign_all(logits);
    apply_top_p(c, 0.9f);
    EXPECT_EQ(ids(c), expected) << seed;
  }
}

TEST(MinP, KeepsTokensAboveTheScaledTopProbability) {
  const auto logits = testing::gaussian(1000, 21, 2.0f);
  const Ref r = reference(logits);
  std::set<TokenId> expected;
  for (size_t i = 0; i < r.sorted.size(); ++i) {
    if (r.p[i] >= 0.05 * r.p[0]) expected.insert(r.sorted[i].id);
  }
  Candidates c;
  c.assign_all(logits);
  apply_min_p(c, 0.05f);
  EXPECT_EQ(ids(c), expected);
}

TEST(TypicalP, KeepsTheMostTypicalTokensReachingP) {
  const auto logits = testing::gaussian(400, 22, 2.0f);
  const Ref r = reference(logits);
  double entropy = 0.0;
  for (double p : r.p) entropy -= p * std::log(p);
  std::vector<std::pair<double, size_t>> order;
  for (size_t i = 0; i < r.p.size(); ++i) order.emplace_back(std::abs(-std::log(r.p[i]) - entropy), i);
  std::sort(order.begin(), order.end());
  std::set<TokenId> expected;
  double cum = 0.0;
  for (auto [score, i] : order) {
    expected.insert(r.sorted[i].id);
    cum += r.p[i];
    if (cum >= 0.7) break;
  }
  Candidates c;
  c.assign_all(logits);
  std::vector<std::pair<float, uint32_t>> scratch;
  apply_typical_p(c, 0.7f, scratch);
  EXPECT_EQ(ids(c), expected);
}

TEST(TopNSigma, KeepsLogitsWithinNStandardDeviationsOfTheMax) {
  const auto logits = testing::gaussian(1000, 23, 2.0f);
  double mean = 0.0, sq = 0.0;
  for (float l : logits) mean += l;
  mean /= static_cast<double>(logits.size());
  for (float l : logits) sq += (l - mean) * (l - mean);
  const double sigma = std::sqrt(sq / static_cast<double>(logits.size()));
  const float max = *std::max_element(logits.begin(), logits.end());
  std::set<TokenId> expected;
  for (size_t i = 0; i < logits.size(); ++i) {
    if (logits[i] >= max - 1.5 * sigma) expected.insert(static_cast<TokenId>(i));
  }
  Candidates c;
  c.assign_all(logits);
  apply_top_n_sigma(c, 1.5f);
  EXPECT_EQ(ids(c), expected);
}

TEST(Xtc, RemovesTheTopChoicesButTheLeastLikelyAboveTheThreshold) {
  // p ∝ 4, 3, 2, 1 → 0.4, 0.3, 0.2, 0.1; threshold 0.15 → remove 0.4 and 0.3.
  const std::vector<float> logits = {std::log(4.0f), std::log(3.0f), std::log(2.0f), std::log(1.0f)};
  Candidates c;
  c.assign_all(logits);
  std::mt19937_64 rng(1);
  apply_xtc(c, 1.0f, 0.15f, rng);
  EXPECT_EQ(ids(c), (std::set<TokenId>{2, 3}));
}

TEST(Xtc, DoesNothingWhenOnlyOneTokenReachesTheThreshold) {
  const std::vector<float> logits = {std::log(8.0f), std::log(1.0f), std::log(1.0f)};
  Candidates c;
  c.assign_all(logits);
  std::mt19937_64 rng(1);
  apply_xtc(c, 1.0f, 0.5f, rng);
  EXPECT_EQ(c.size(), 3u);
}

TEST(Draw, NeverPicksABannedToken) {
  const std::vector<float> logits = {-INFINITY, 0.0f, -INFINITY};
  Candidates c;
  c.assign_all(logits);
  std::mt19937_64 rng(3);
  for (int i = 0; i < 200; ++i) EXPECT_EQ(draw(c, rng), 1);
}

}  // namespace
}  // namespace met
