// Tests for the token penalties (src/sampling/penalties.h).
#include "sampling/penalties.h"
#include "testing/random_data.h"

#include <map>
#include <random>

#include <gtest/gtest.h>

namespace met {
namespace {

TEST(PresenceFrequency, FollowsOpenAiArithmetic) {
  std::vector<float> logits = {1.0f, 1.0f, 1.0f, 1.0f};
  const std::vector<TokenId> output = {2, 2, 2, 0};
  TokenTally scratch;
  apply_presence_frequency(0.5f, 0.25f, output, scratch, logits);
  EXPECT_FLOAT_EQ(logits[0], 1.0f - 0.5f - 0.25f);
  EXPECT_FLOAT_EQ(logits[1], 1.0f);
  EXPECT_FLOAT_EQ(logits[2], 1.0f - 0.5f - 0.75f);
  EXPECT_FLOAT_EQ(logits[3], 1.0f);
}

TEST(PresenceFrequency, MatchesAStraightforwardReferenceOnRandomLogits) {
  const size_t vocab = 500;
  std::vector<float> logits = testing::gaussian(vocab, 1, 3.0f);
  std::vector<TokenId> output;
  std::mt19937 rng(2);
  for (int i = 0; i < 300; ++i) output.push_back(static_cast<TokenId>(rng() % 60));
  std::vector<float> expected = logits;
  std::map<TokenId, int> counts;
  for (TokenId t : output) ++counts[t];
  for (auto [t, c] : counts) expected[static_cast<size_t>(t)] -= 0.3f + 0.1f * static_cast<float>(c);
  TokenTally scratch;
  apply_presence_frequency(0.3f, 0.1f, output, scratch, logits);
  for (size_t i = 0; i < vocab; ++i) EXPECT_NEAR(logits[i], expected[i], 1e-5f) << i;
}

TEST(RepetitionPenalty, DividesPositiveAndMultipliesNegativeLogitsOncePerToken) {
  std::vector<float> logits = {2.0f, -2.0f, 3.0f};
  const std::vector<TokenId> window = {0, 1, 0, 0};
  TokenTally scratch;
  apply_repetition_penalty(2.0f, window, scratch, logits);
  EXPECT_FLOAT_EQ(logits[0], 1.0f);
  EXPECT_FLOAT_EQ(logits[1], -4.0f);
  EXPECT_FLOAT_EQ(logits[2], 3.0f);
}

TEST(RepetitionPenalty, MatchesAStraightforwardReferenceOnRandomLogits) {
  const size_t vocab = 300;
  std::vector<float> logits = testing::gaussian(vocab, 3, 3.0f);
  std::vector<TokenId> window;
  std::mt19937 rng(4);
  for (int i = 0; i < 256; ++i) window.push_back(static_cast<TokenId>(rng() % vocab));
  std::vector<float> expected = logits;
  std::vector<bool> seen(vocab, false);
  for (TokenId t : window) seen[static_cast<size_t>(t)] = true;
  for (size_t i = 0; i < vocab; ++i) {
    if (seen[i]) expected[i] = expected[i] > 0 ? expected[i] / 1.3f : expected[i] * 1.3f;
  }
  TokenTally scratch;
  apply_repetition_penalty(1.3f, window, scratch, logits);
  for (size_t i = 0; i < vocab; ++i) EXPECT_FLOAT_EQ(logits[i], expected[i]) << i;
}

}  // namespace
}  // namespace met
