// Tests for scheduler/preempt.h: the victim choice.
#include "scheduler/preempt.h"

#include <gtest/gtest.h>

#include <vector>

namespace met {
namespace {

TEST(ChooseDecodeVictim, PicksTheLatestAdmitted) {
  std::vector<VictimCandidate> c = {{1, 10, 0}, {5, 3, 0}, {3, 7, 0}};
  EXPECT_EQ(choose_decode_victim(c), 1u);
}

TEST(ChooseDecodeVictim, SkipsAJustResumedSequenceWhileItIsImmune) {
  // Admitted last but resumed 4 tokens ago: immune until 20 tokens.
  std::vector<VictimCandidate> c = {{1, 10, 0}, {5, 16, 16 + PREEMPT_IMMUNITY_TOKENS}, {3, 7, 0}};
  EXPECT_EQ(choose_decode_victim(c), 2u);
}

TEST(ChooseDecodeVictim, ImmunityEndsAfterTheImmunityTokens) {
  std::vector<VictimCandidate> c = {{1, 10, 0}, {5, 20 + PREEMPT_IMMUNITY_TOKENS, 20 + PREEMPT_IMMUNITY_TOKENS}};
  EXPECT_EQ(choose_decode_victim(c), 1u);
}

TEST(ChooseDecodeVictim, TakesAnImmuneSequenceWhenNoOtherRowIsEligible) {
  std::vector<VictimCandidate> c = {{2, 1, 100}, {7, 1, 100}};
  EXPECT_EQ(choose_decode_victim(c), 1u);
}

TEST(ChooseDecodeVictim, HasNoVictimWithoutCandidates) {
  EXPECT_EQ(choose_decode_victim({}), std::nullopt);
}

}  // namespace
}  // namespace met
