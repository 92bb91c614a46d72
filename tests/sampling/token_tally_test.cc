// Tests for TokenTally (src/sampling/token_tally.h).
#include "sampling/token_tally.h"

#include <gtest/gtest.h>

namespace met {
namespace {

TEST(TokenTally, CountsAndRaisesPerToken) {
  TokenTally t;
  t.reset(10);
  t.add(3);
  t.add(3);
  t.raise(5, 4);
  t.raise(5, 2);
  EXPECT_EQ(t.value(3), 2);
  EXPECT_EQ(t.value(5), 4);
  EXPECT_EQ(t.value(4), 0);
  EXPECT_EQ(t.touched().size(), 2u);
}

TEST(TokenTally, ResetClearsOnlyWhatWasTouchedAndIgnoresIdsOutsideTheVocabulary) {
  TokenTally t;
  t.reset(4);
  t.add(1);
  t.add(9);
  t.add(-1);
  EXPECT_EQ(t.touched().size(), 1u);
  t.reset(4);
  EXPECT_EQ(t.value(1), 0);
  EXPECT_TRUE(t.touched().empty());
}

}  // namespace
}  // namespace met
