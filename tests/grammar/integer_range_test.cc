// Tests integer_range_gbnf against every integer in and around each range.
#include "grammar/integer_range.h"

#include <gtest/gtest.h>

#include "grammar/grammar_testing.h"

namespace met {
namespace {

TEST(IntegerRange, MatchesExactlyTheIntegersInRange) {
  const std::pair<int64_t, int64_t> ranges[] = {{0, 0}, {0, 9}, {7, 13}, {-20, -3}, {-99, 100}, {101, 999}, {5, 1005}};
  for (const auto& [lo, hi] : ranges) {
    const Grammar g = testing::gbnf("root ::= " + integer_range_gbnf(lo, hi));
    for (int64_t v = -1100; v <= 1100; ++v) {
      EXPECT_EQ(testing::grammar_matches(g, std::to_string(v)), v >= lo && v <= hi) << lo << ".." << hi << " at " << v;
    }
    EXPECT_FALSE(testing::grammar_matches(g, "-0"));
    EXPECT_FALSE(testing::grammar_matches(g, "007"));
  }
}

}  // namespace
}  // namespace met
