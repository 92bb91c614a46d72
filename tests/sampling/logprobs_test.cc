// Tests for sampling/logprobs.h against a double-precision log-softmax.
#include "sampling/logprobs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "testing/random_data.h"

namespace met {
namespace {

std::vector<float> random_logits(size_t n, uint64_t seed, float scale) {
  std::mt19937_64 rng(seed);
  met::testing::NormalFloat d(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

std::vector<double> reference_log_softmax(const std::vector<float>& x) {
  double max = -std::numeric_limits<double>::infinity();
  for (float v : x) max = std::max(max, static_cast<double>(v));
  double sum = 0.0;
  for (float v : x) sum += std::exp(static_cast<double>(v) - max);
  std::vector<double> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = static_cast<double>(x[i]) - max - std::log(sum);
  return out;
}

TEST(Logprobs, ChosenLogprobEqualsLogSoftmaxOfTheRawLogits) {
  for (size_t vocab : {size_t{7}, size_t{1000}, size_t{32000}, size_t{151936}}) {
    for (float scale : {0.5f, 3.0f, 20.0f}) {
      const auto logits = random_logits(vocab, vocab + static_cast<uint64_t>(scale), scale);
      const auto ref = reference_log_softmax(logits);
      for (TokenId chosen : {TokenId{0}, static_cast<TokenId>(vocab / 2), static_cast<TokenId>(vocab - 1)}) {
        const TokenLogprob lp = token_logprob(logits, chosen, 0);
        EXPECT_EQ(lp.token, chosen);
        EXPECT_NEAR(lp.logprob, ref[static_cast<size_t>(chosen)], 2e-4 + 1e-5 * std::abs(ref[static_cast<size_t>(chosen)]))
            << "vocab " << vocab << " scale " << scale;
        EXPECT_TRUE(lp.top.empty());
      }
    }
  }
}

TEST(Logprobs, TopAlternativesAreTheLargestSortedDescendingWithTiesBySmallerId) {
  auto logits = random_logits(5000, 11, 2.0f);
  logits[10] = 9.0f;
  logits[20] = 9.0f;  // a tie: 10 lists before 20
  logits[4000] = 8.5f;
  const auto ref = reference_log_softmax(logits);
  std::vector<TokenId> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](TokenId a, TokenId b) { return logits[a] > logits[b]; });

  const TokenLogprob lp = token_logprob(logits, 4000, kMaxTopLogprobs);
  ASSERT_EQ(lp.top.size(), static_cast<size_t>(kMaxTopLogprobs));
  for (size_t i = 0; i < lp.top.size(); ++i) {
    EXPECT_EQ(lp.top[i].token, order[i]) << "place " << i;
    EXPECT_NEAR(lp.top[i].logprob, ref[static_cast<size_t>(order[i])], 2e-4);
  }
  EXPECT_EQ(lp.top[0].token, 10);
  EXPECT_EQ(lp.top[1].token, 20);
  EXPECT_EQ(lp.top[2].token, 4000);
  EXPECT_EQ(lp.rank, 3);
  EXPECT_FLOAT_EQ(lp.top[2].logprob, lp.logprob);  // the chosen one, listed, agrees
}

TEST(Logprobs, RankCountsTokensWithAStrictlyLargerLogit) {
  std::vector<float> logits = {1.0f, 5.0f, 3.0f, 5.0f, -2.0f};
  EXPECT_EQ(token_logprob(logits, 1, 0).rank, 1);
  EXPECT_EQ(token_logprob(logits, 3, 0).rank, 1);
  EXPECT_EQ(token_logprob(logits, 2, 0).rank, 3);
  EXPECT_EQ(token_logprob(logits, 4, 0).rank, 5);
}

TEST(Logprobs, BannedTokensAreNeverListedAndGetMinusInfinity) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> logits(100, -inf);
  logits[3] = 1.0f;
  logits[50] = 2.0f;
  const TokenLogprob lp = token_logprob(logits, 3, 5);
  ASSERT_EQ(lp.top.size(), 2u);
  EXPECT_EQ(lp.top[0].token, 50);
  EXPECT_EQ(lp.top[1].token, 3);
  EXPECT_NEAR(std::exp(lp.top[0].logprob) + std::exp(lp.top[1].logprob), 1.0, 1e-6);
  EXPECT_EQ(token_logprob(logits, 0, 0).logprob, -inf);
}

TEST(Logprobs, ProbabilitiesOfTheWholeRowSumToOne) {
  const auto logits = random_logits(32000, 5, 4.0f);
  const float lse = log_sum_exp(logits);
  double total = 0.0;
  for (float x : logits) total += std::exp(static_cast<double>(x) - lse);
  EXPECT_NEAR(total, 1.0, 1e-5);
}

TEST(Logprobs, LogSumExpOfAnEmptyOrBannedRowIsMinusInfinity) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(log_sum_exp(std::vector<float>{}), -inf);
  EXPECT_EQ(log_sum_exp(std::vector<float>(40, -inf)), -inf);
}

}  // namespace
}  // namespace met
