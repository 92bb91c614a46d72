// Tests for repeating_tail.
#include "sampling/repetition_detector.h"

#include <gtest/gtest.h>

#include <vector>

namespace met {
namespace {

std::vector<TokenId> repeat(const std::vector<TokenId>& block, int times, std::vector<TokenId> prefix = {}) {
  for (int i = 0; i < times; ++i) prefix.insert(prefix.end(), block.begin(), block.end());
  return prefix;
}

TEST(RepeatingTail, FindsABlockRepeatedEnoughTimesAtTheEnd) {
  const std::vector<TokenId> block = {5, 6, 7, 8, 9};
  EXPECT_EQ(repeating_tail(repeat(block, 4, {1, 2, 3})), 5);
  EXPECT_EQ(repeating_tail(repeat(block, 3, {1, 2, 3})), std::nullopt) << "three times is not yet four";
}

TEST(RepeatingTail, ReportsTheShortestPeriod) {
  EXPECT_EQ(repeating_tail(repeat({1, 2, 3, 4}, 8)), 4) << "8 x [1 2 3 4] is also 4 x a period of 8";
}

TEST(RepeatingTail, IgnoresPeriodsBelowTheMinimumAndTextThatMovesOn) {
  EXPECT_EQ(repeating_tail(std::vector<TokenId>(40, 7)), 4) << "a run of one token repeats every period";
  EXPECT_EQ(repeating_tail(std::vector<TokenId>(40, 7), RepetitionLimits{.min_period = 4, .max_period = 64,
                                                                            .min_repeats = 11}),
            std::nullopt);
  std::vector<TokenId> varied;
  for (int i = 0; i < 300; ++i) varied.push_back(i % 97);
  EXPECT_EQ(repeating_tail(varied), std::nullopt) << "a period of 97 is above max_period";
  std::vector<TokenId> broken = repeat({1, 2, 3, 4, 5}, 4);
  broken.push_back(42);
  EXPECT_EQ(repeating_tail(broken), std::nullopt) << "the loop must reach the last token";
}

}  // namespace
}  // namespace met
