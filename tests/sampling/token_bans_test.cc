// Tests for the token bans (src/sampling/token_bans.h).
#include "sampling/token_bans.h"

#include <cmath>

#include <gtest/gtest.h>

namespace met {
namespace {

TEST(LogitBias, AddsTheBiasAndMinus100Bans) {
  std::vector<float> logits = {1.0f, 2.0f, 3.0f};
  const std::vector<LogitBias> biases = {{.token = 0, .bias = 0.5f}, {.token = 2, .bias = -100.0f},
                                         {.token = 7, .bias = 5.0f}};
  apply_logit_bias(biases, logits);
  EXPECT_FLOAT_EQ(logits[0], 1.5f);
  EXPECT_FLOAT_EQ(logits[1], 2.0f);
  EXPECT_TRUE(std::isinf(logits[2]) && logits[2] < 0);
}

TEST(AllowedTokens, BansEveryOtherToken) {
  std::vector<float> logits = {1.0f, 2.0f, 3.0f, 4.0f};
  std::vector<float> saved;
  const std::vector<TokenId> allowed = {1, 3, 3, 99};
  apply_allowed_tokens(allowed, logits, saved);
  EXPECT_TRUE(std::isinf(logits[0]));
  EXPECT_FLOAT_EQ(logits[1], 2.0f);
  EXPECT_TRUE(std::isinf(logits[2]));
  EXPECT_FLOAT_EQ(logits[3], 4.0f);
}

TEST(BadWords, BansTheLastTokenOnlyWhenThePrefixEndsTheOutput) {
  const std::vector<std::vector<TokenId>> words = {{4, 5, 6}, {2}};
  std::vector<float> logits(8, 0.0f);
  const std::vector<TokenId> matching = {1, 4, 5};
  apply_bad_words(words, matching, logits);
  EXPECT_TRUE(std::isinf(logits[6]));
  EXPECT_TRUE(std::isinf(logits[2]));  // a one-token word is always banned

  std::vector<float> other(8, 0.0f);
  const std::vector<TokenId> not_matching = {4, 5, 1};
  apply_bad_words(words, not_matching, other);
  EXPECT_FALSE(std::isinf(other[6]));
  const std::vector<TokenId> too_short = {5};
  apply_bad_words(words, too_short, other);
  EXPECT_FALSE(std::isinf(other[6]));
}

}  // namespace
}  // namespace met
