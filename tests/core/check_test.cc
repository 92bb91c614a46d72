// Tests for MET_CHECK (src/core/check.h).
#include "core/check.h"

#include <gtest/gtest.h>

namespace met {
namespace {

TEST(CheckDeathTest, FailureNamesConditionAndMessage) {
  const int blocks = 3;
  EXPECT_DEATH(MET_CHECK(blocks == 4, "pool has {} blocks", blocks),
               "CHECK failed at .*check_test.cc:[0-9]+: blocks == 4: pool has 3 blocks");
}

TEST(CheckDeathTest, FailureWithoutMessageNamesCondition) {
  EXPECT_DEATH(MET_CHECK(1 + 1 == 3), "CHECK failed .*1 \\+ 1 == 3");
}

TEST(Check, PassingCheckHasNoEffect) {
  int evaluations = 0;
  MET_CHECK(++evaluations == 1, "evaluated once");
  EXPECT_EQ(evaluations, 1);
}

}  // namespace
}  // namespace met
