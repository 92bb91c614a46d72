// Tests for the thinking control's decisions (scheduler/thinking.h).
#include "scheduler/thinking.h"

#include <gtest/gtest.h>

#include <vector>

namespace met {
namespace {

constexpr TokenId kStart = 900, kEnd = 901;

ThinkingConfig config(std::optional<int32_t> budget, bool starts_inside = true) {
  ThinkingConfig c;
  c.think_start = kStart;
  c.think_end = kEnd;
  c.starts_inside = starts_inside;
  c.budget = budget;
  return c;
}

// Appends `t` to `out` and observes it as sampled.
void sample(const ThinkingConfig& c, ThinkingState& s, std::vector<TokenId>& out, TokenId t,
            ThinkEndCause forced = ThinkEndCause::kNone) {
  out.push_back(t);
  observe_thinking_token(c, s, out, forced);
}

TEST(Thinking, TheBudgetForcesThinkEndAfterExactlyThatManyReasoningTokens) {
  const ThinkingConfig c = config(5);
  ThinkingState s = initial_thinking_state(c);
  std::vector<TokenId> out;
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(force_cause(c, s, out), ThinkEndCause::kNone) << "after " << i;
    sample(c, s, out, 10 + i);
  }
  EXPECT_EQ(force_cause(c, s, out), ThinkEndCause::kBudget);
  sample(c, s, out, kEnd, ThinkEndCause::kBudget);
  EXPECT_FALSE(s.inside);
  EXPECT_EQ(s.last_end, ThinkEndCause::kBudget);
  EXPECT_EQ(s.reasoning_tokens, 5);
  EXPECT_EQ(force_cause(c, s, out), ThinkEndCause::kNone) << "the answer is never forced";
}

TEST(Thinking, ABudgetOfZeroClosesThinkingBeforeAnyReasoning) {
  const ThinkingConfig c = config(0);
  const ThinkingState s = initial_thinking_state(c);
  EXPECT_EQ(force_cause(c, s, {}), ThinkEndCause::kBudget);
}

TEST(Thinking, ModelThatClosesThinkingItselfIsNotForcedAndMarkersAreNotReasoning) {
  const ThinkingConfig c = config(100);
  ThinkingState s = initial_thinking_state(c);
  std::vector<TokenId> out;
  sample(c, s, out, 1);
  sample(c, s, out, 2);
  sample(c, s, out, kEnd);
  sample(c, s, out, 3);
  EXPECT_FALSE(s.inside);
  EXPECT_EQ(s.last_end, ThinkEndCause::kModel);
  EXPECT_EQ(s.reasoning_tokens, 2);
}

TEST(Thinking, ThinkingTheModelOpensItselfUsesTheSpontaneousBudget) {
  ThinkingConfig c = config(100, /*starts_inside=*/false);
  c.spontaneous_budget = 2;
  ThinkingState s = initial_thinking_state(c);
  std::vector<TokenId> out;
  sample(c, s, out, 7);
  EXPECT_FALSE(s.inside);
  sample(c, s, out, kStart);
  EXPECT_TRUE(s.inside);
  EXPECT_TRUE(s.spontaneous);
  sample(c, s, out, 8);
  EXPECT_EQ(force_cause(c, s, out), ThinkEndCause::kNone);
  sample(c, s, out, 9);
  EXPECT_EQ(force_cause(c, s, out), ThinkEndCause::kBudget);
}

TEST(Thinking, TheWatchdogClosesThinkingThatLoops) {
  const ThinkingConfig c = config(std::nullopt);
  ThinkingState s = initial_thinking_state(c);
  std::vector<TokenId> out;
  for (int i = 0; i < 10; ++i) sample(c, s, out, 100 + i);  // a varied start
  bool fired = false;
  for (int i = 0; i < 64 && !fired; ++i) {
    sample(c, s, out, 50 + i % 6);  // "wait, let me check again" x N
    fired = force_cause(c, s, out) == ThinkEndCause::kWatchdog;
  }
  EXPECT_TRUE(fired);
  sample(c, s, out, kEnd, ThinkEndCause::kWatchdog);
  EXPECT_EQ(s.watchdog_fires, 1);

  ThinkingConfig off = c;
  off.watchdog = false;
  ThinkingState s2 = initial_thinking_state(off);
  std::vector<TokenId> out2;
  for (int i = 0; i < 200; ++i) {
    sample(off, s2, out2, 50 + i % 6);
    EXPECT_EQ(force_cause(off, s2, out2), ThinkEndCause::kNone);
  }
}

// Harmony's markers are several tokens: "<|channel|>analysis<|message|>"
// opens reasoning; a budget ends it with "<|end|><|start|>assistant
// <|channel|>final<|message|>", here kEnd and three stand-ins.
constexpr TokenId kChannelId = 40, kAnalysisId = 41, kMessageId = 42;
const std::vector<TokenId> kHarmonyEnd = {kEnd, 30, 31, 32};

ThinkingConfig harmony(std::optional<int32_t> budget, bool starts_inside = true) {
  ThinkingConfig c = config(budget, starts_inside);
  c.think_start = kChannelId;
  c.start_sequence = {kChannelId, kAnalysisId, kMessageId};
  c.end_sequence = kHarmonyEnd;
  return c;
}

TEST(Thinking, ABudgetForcesAMultiTokenEndWholeAndThinkingLastsUntilItsLastToken) {
  const ThinkingConfig c = harmony(2);
  ThinkingState s = initial_thinking_state(c);
  std::vector<TokenId> out;
  sample(c, s, out, 10);
  sample(c, s, out, 11);
  for (TokenId t : kHarmonyEnd) {
    EXPECT_TRUE(s.inside) << "a grammar waits for the whole end";
    ASSERT_EQ(force_cause(c, s, out), ThinkEndCause::kBudget);
    EXPECT_EQ(forced_think_token(c, s), t);
    sample(c, s, out, t, ThinkEndCause::kBudget);
  }
  EXPECT_FALSE(s.inside);
  EXPECT_EQ(s.last_end, ThinkEndCause::kBudget);
  EXPECT_EQ(s.reasoning_tokens, 2) << "the end's tokens are not reasoning";
  EXPECT_EQ(force_cause(c, s, out), ThinkEndCause::kNone);
}

TEST(Thinking, AModelThatEndsThinkingItselfGetsTheRestOfTheEndOnlyWhenAsked) {
  ThinkingConfig c = harmony(100);
  ThinkingState s = initial_thinking_state(c);
  std::vector<TokenId> out;
  sample(c, s, out, 10);
  sample(c, s, out, kEnd);
  EXPECT_FALSE(s.inside) << "the model writes its next header freely";
  EXPECT_EQ(s.last_end, ThinkEndCause::kModel);
  EXPECT_EQ(force_cause(c, s, out), ThinkEndCause::kNone);

  c.end_sequence_after_model_end = true;  // a constrained answer: met writes its header
  s = initial_thinking_state(c);
  out.clear();
  sample(c, s, out, 10);
  sample(c, s, out, kEnd);
  for (size_t i = 1; i < kHarmonyEnd.size(); ++i) {
    EXPECT_TRUE(s.inside);
    ASSERT_EQ(force_cause(c, s, out), ThinkEndCause::kModel);
    EXPECT_EQ(forced_think_token(c, s), kHarmonyEnd[i]);
    sample(c, s, out, kHarmonyEnd[i], ThinkEndCause::kModel);
  }
  EXPECT_FALSE(s.inside);
  EXPECT_EQ(s.last_end, ThinkEndCause::kModel);
  EXPECT_EQ(s.reasoning_tokens, 1);
}

TEST(Thinking, AStartSequenceOpensThinkingOnlyWhenTheOutputEndsWithAllOfIt) {
  const ThinkingConfig c = harmony(1, /*starts_inside=*/false);
  ThinkingState s = initial_thinking_state(c);
  std::vector<TokenId> out;
  sample(c, s, out, kChannelId);
  sample(c, s, out, 7);
  sample(c, s, out, kMessageId);
  EXPECT_FALSE(s.inside) << "<|channel|>final<|message|> opens no reasoning";
  sample(c, s, out, kChannelId);
  sample(c, s, out, kAnalysisId);
  EXPECT_FALSE(s.inside);
  sample(c, s, out, kMessageId);
  EXPECT_TRUE(s.inside);
  EXPECT_TRUE(s.spontaneous);
  sample(c, s, out, 8);
  EXPECT_EQ(force_cause(c, s, out), ThinkEndCause::kBudget);
  EXPECT_EQ(forced_think_token(c, s), kEnd);
}

TEST(Thinking, TheWatchdogForcesTheWholeMultiTokenEndAndFiresOnce) {
  const ThinkingConfig c = harmony(std::nullopt);
  ThinkingState s = initial_thinking_state(c);
  std::vector<TokenId> out;
  for (int i = 0; i < 10; ++i) sample(c, s, out, 100 + i);
  for (int i = 0; i < 64 && force_cause(c, s, out) != ThinkEndCause::kWatchdog; ++i) sample(c, s, out, 50 + i % 6);
  ASSERT_EQ(force_cause(c, s, out), ThinkEndCause::kWatchdog);
  for (TokenId t : kHarmonyEnd) {
    ASSERT_EQ(force_cause(c, s, out), ThinkEndCause::kWatchdog);
    sample(c, s, out, t, ThinkEndCause::kWatchdog);
  }
  EXPECT_FALSE(s.inside);
  EXPECT_EQ(s.watchdog_fires, 1);
  EXPECT_EQ(s.last_end, ThinkEndCause::kWatchdog);
}

}  // namespace
}  // namespace met
