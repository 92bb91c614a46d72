// Tests for PredictionMatcher, driven through greedy verify steps as the
// engine will drive it.
#include "spec/prediction.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "spec/acceptance.h"
#include "testing/allocation_counter.h"

namespace met {
namespace {

using Tokens = std::vector<TokenId>;

constexpr TokenId kEos = 7;

// The prediction 100, 101, ..., 119.
Tokens twenty_tokens() {
  Tokens t(20);
  std::iota(t.begin(), t.end(), 100);
  return t;
}

Tokens concat(std::initializer_list<Tokens> parts) {
  Tokens all;
  for (const Tokens& p : parts) all.insert(all.end(), p.begin(), p.end());
  return all;
}

Tokens slice(const Tokens& t, size_t from, size_t to) { return Tokens(t.begin() + from, t.begin() + to); }

struct GreedyRun {
  Tokens output;
  std::vector<Tokens> proposals;  // one per step
};

// Greedy decoding with drafts from `matcher`, against a target model whose
// greedy output is `target` (ending with kEos): with the output so far equal
// to target[0, i), the target's argmax at position i is target[i]. The
// engine's loop: propose, verify (accept_greedy), commit, tell the matcher.
GreedyRun run_greedy(PredictionMatcher& matcher, const Tokens& target, int32_t max_draft) {
  GreedyRun run;
  Tokens drafts;
  while (run.output.size() < target.size()) {
    matcher.propose(max_draft, drafts);
    run.proposals.push_back(drafts);
    const size_t pos = run.output.size();
    Tokens argmax(drafts.size() + 1);
    for (size_t i = 0; i < argmax.size(); ++i) argmax[i] = pos + i < target.size() ? target[pos + i] : kEos;
    const GreedyVerdict verdict = accept_greedy(drafts, argmax);
    Tokens committed = slice(drafts, 0, static_cast<size_t>(verdict.num_accepted));
    committed.push_back(verdict.next);
    committed.resize(std::min(committed.size(), target.size() - pos));  // the stop ends the output
    matcher.on_verified(static_cast<int32_t>(drafts.size()), committed);
    run.output.insert(run.output.end(), committed.begin(), committed.end());
  }
  return run;
}

// Tokens committed by steps without drafts, one each.
void commit_undrafted(PredictionMatcher& matcher, const Tokens& tokens) {
  for (const TokenId& token : tokens) matcher.on_committed(std::span<const TokenId>(&token, 1));
}

// Another source's drafts commit several tokens in one step: the matcher
// follows them as it follows tokens committed one by one.
TEST(PredictionMatcher, TokensCommittedWithoutItsDraftsAreFollowedManyAtATime) {
  PredictionMatcher m(twenty_tokens());
  m.on_committed(Tokens{100, 101, 102, 103, 104, 105, 106});
  EXPECT_EQ(m.usage().accepted_prediction_tokens, 7);
  EXPECT_EQ(m.usage().rejected_prediction_tokens, 0);
  Tokens drafts;
  m.propose(3, drafts);
  EXPECT_EQ(drafts, (Tokens{107, 108, 109}));
}

TEST(PredictionMatcher, ProposesThePredictionWhileTheOutputFollowsIt) {
  PredictionMatcher m(twenty_tokens());
  Tokens drafts;
  m.propose(4, drafts);
  EXPECT_EQ(drafts, (Tokens{100, 101, 102, 103}));
  m.propose(4, drafts);
  EXPECT_EQ(drafts, (Tokens{100, 101, 102, 103})) << "proposing is a query";
  m.on_verified(4, Tokens{100, 101, 102, 103, 104});
  m.propose(3, drafts);
  EXPECT_EQ(drafts, (Tokens{105, 106, 107}));
  EXPECT_TRUE(m.in_step());
}

TEST(PredictionMatcher, AnOutputEqualToThePredictionAcceptsEveryDraft) {
  const Tokens prediction = twenty_tokens();
  PredictionMatcher m(prediction);
  const GreedyRun run = run_greedy(m, concat({prediction, {kEos}}), 4);
  EXPECT_EQ(run.output, concat({prediction, {kEos}}));
  // 4 drafts + the target's token, four times; then the prediction is spent.
  EXPECT_EQ(run.proposals.size(), 5u);
  EXPECT_TRUE(run.proposals.back().empty());
  EXPECT_EQ(m.usage().accepted_prediction_tokens, 20);
  EXPECT_EQ(m.usage().rejected_prediction_tokens, 0);
}

TEST(PredictionMatcher, PicksThePredictionUpAgainAfterAnEdit) {
  // 108 and 109 are replaced by 900 and 901; the rest is the prediction.
  const Tokens prediction = twenty_tokens();
  const Tokens target = concat({slice(prediction, 0, 8), {900, 901}, slice(prediction, 10, 20), {kEos}});
  PredictionMatcher m(prediction, PredictionOptions{.confirm_n = 3});
  const GreedyRun run = run_greedy(m, target, 4);
  EXPECT_EQ(run.output, target);
  // Steps: 100-103 kept + 104; 105-107 kept, 108 rejected, 900 committed;
  // 900 may replace 108 alone, so 109-112 are drafted and rejected, 901
  // committed; no drafts while 110 is committed, which sits where the
  // prediction's 110 would if 900 901 replaced as many tokens; then 111-114
  // kept + 115; 116-119 kept + EOS.
  ASSERT_EQ(run.proposals.size(), 6u);
  EXPECT_EQ(run.proposals[1], (Tokens{105, 106, 107, 108}));
  EXPECT_EQ(run.proposals[2], (Tokens{109, 110, 111, 112})) << "a one-token substitution is tried once";
  EXPECT_TRUE(run.proposals[3].empty());
  EXPECT_EQ(run.proposals[4], (Tokens{111, 112, 113, 114})) << "the prediction's text after the edit";
  EXPECT_EQ(run.proposals[5], (Tokens{116, 117, 118, 119}));
  // Accepted: 100-107 (8) and 111-119 (9), counted as they continued the
  // prediction in step; 110 was committed out of step. Rejected: 108, then
  // 109-112.
  EXPECT_EQ(m.usage().accepted_prediction_tokens, 17);
  EXPECT_EQ(m.usage().rejected_prediction_tokens, 5);
}

TEST(PredictionMatcher, ASubstitutedTokenIsSteppedOverAtOnce) {
  // 108 is replaced by 900: the output is back in the prediction's text at
  // the next step.
  const Tokens prediction = twenty_tokens();
  const Tokens target = concat({slice(prediction, 0, 8), {900}, slice(prediction, 9, 20), {kEos}});
  PredictionMatcher m(prediction, PredictionOptions{.confirm_n = 3});
  const GreedyRun run = run_greedy(m, target, 4);
  EXPECT_EQ(run.output, target);
  // 100-103 + 104; 105-107 kept, 108 rejected, 900; 109-112 + 113; 114-117
  // + 118; 119 + EOS.
  ASSERT_EQ(run.proposals.size(), 5u);
  EXPECT_EQ(run.proposals[2], (Tokens{109, 110, 111, 112}));
  EXPECT_EQ(m.usage().accepted_prediction_tokens, 19);
  EXPECT_EQ(m.usage().rejected_prediction_tokens, 1);
}

// A text that repeats itself: the words before an edit occur again further
// on, but the output is picked up where it left the prediction, not at the
// repeat (which would skip the text between and lose the place for good).
TEST(PredictionMatcher, AnEditInRepeatingTextIsPickedUpWhereItIsNotAtARepeat) {
  const Tokens period = {1, 2, 3, 4, 5, 6};
  const Tokens text = concat({period, period, period, {50, 51, 52, 53, 54, 55, 56, 57}});
  Tokens prediction = text;
  prediction[3] = 99;  // the output says 4 there
  PredictionMatcher m(prediction, PredictionOptions{.confirm_n = 3});
  commit_undrafted(m, slice(text, 0, 4));  // 1 2 3 in step, then 4 leaves it
  EXPECT_TRUE(m.in_step()) << "4 may replace 99 alone";
  const Tokens target = concat({slice(text, 4, text.size()), {kEos}});
  const GreedyRun run = run_greedy(m, target, 8);
  EXPECT_EQ(run.output, target);
  for (const Tokens& p : run.proposals) EXPECT_FALSE(p.empty()) << "every step drafts";
  EXPECT_EQ(m.usage().rejected_prediction_tokens, 0);
}

TEST(PredictionMatcher, AWrongPickKeepsWhereTheOutputLeftThePrediction) {
  // The output moves the prediction's "7 8 9" before "20 21": after it the
  // prediction is picked up past "7 8 9" (two tokens from where an edit of
  // as many tokens would put it), but the output goes on with 20 21, which
  // come before that place.
  const Tokens prediction = concat({{10, 11, 12, 13, 14, 15}, {20, 21}, {7, 8, 9}, {22, 23, 24, 25, 26, 27, 28, 29}});
  const Tokens target = concat({{10, 11, 12, 13, 14, 15}, {7, 8, 9}, {20, 21}, slice(prediction, 11, 19), {kEos}});
  PredictionMatcher m(prediction, PredictionOptions{.confirm_n = 3});
  const GreedyRun run = run_greedy(m, target, 4);
  EXPECT_EQ(run.output, target);
  // 10-13 + 14; 15 kept, 20 21 7 rejected, 7; 21 7 8 9 (7 may replace 20
  // alone) rejected, 8; 9 without drafts, and "7 8 9" picks it up at 22;
  // 22-25 rejected, 20; 20 and 21 without drafts; 22 sits where an edit of
  // as many tokens would put it, counted from where the output left the
  // prediction (not from the wrong pick), so 23-26 kept + 27; 28 29 + EOS.
  ASSERT_EQ(run.proposals.size(), 9u);
  EXPECT_EQ(run.proposals[4], (Tokens{22, 23, 24, 25})) << "the wrong pick";
  EXPECT_TRUE(run.proposals[6].empty());
  EXPECT_EQ(run.proposals[7], (Tokens{23, 24, 25, 26}));
  EXPECT_EQ(m.usage().accepted_prediction_tokens, 6 + 7) << "10-15, then 23-29";
}

TEST(PredictionMatcher, PicksThePredictionUpAgainAfterADeletion) {
  // The output leaves out 106, 107 and 108.
  const Tokens prediction = twenty_tokens();
  const Tokens target = concat({slice(prediction, 0, 6), slice(prediction, 9, 20), {kEos}});
  PredictionMatcher m(prediction, PredictionOptions{.confirm_n = 3});
  const GreedyRun run = run_greedy(m, target, 4);
  EXPECT_EQ(run.output, target);
  // 100-103 kept + 104; 105 kept, 106-108 rejected, 109 committed; 109 may
  // replace 106 alone, so 107-110 are drafted and rejected, 110 committed;
  // 111 without drafts ("109 110 111" is found at the prediction's 109);
  // 112-115 kept + 116; 117-119 kept + EOS.
  ASSERT_EQ(run.proposals.size(), 6u);
  EXPECT_EQ(run.proposals[2], (Tokens{107, 108, 109, 110}));
  EXPECT_EQ(run.proposals[4], (Tokens{112, 113, 114, 115}));
  EXPECT_EQ(m.usage().accepted_prediction_tokens, 6 + 8);
  EXPECT_EQ(m.usage().rejected_prediction_tokens, 3 + 4);
}

TEST(PredictionMatcher, AWrongPredictionIsRejectedOnceThenLeftAlone) {
  PredictionMatcher m({1, 2, 3, 4, 5, 6}, PredictionOptions{.confirm_n = 3});
  const GreedyRun run = run_greedy(m, {50, 51, 52, kEos}, 4);
  EXPECT_EQ(run.proposals[0], (Tokens{1, 2, 3, 4}));
  for (size_t step = 1; step < run.proposals.size(); ++step) EXPECT_TRUE(run.proposals[step].empty());
  EXPECT_FALSE(m.in_step());
  EXPECT_EQ(m.usage().accepted_prediction_tokens, 0);
  EXPECT_EQ(m.usage().rejected_prediction_tokens, 4) << "billed as completion tokens on top of the 4 output tokens";
}

TEST(PredictionMatcher, DraftsCutOffByAStopAreRejected) {
  PredictionMatcher m(twenty_tokens());
  // All four drafts pass verification, but a stop string ends the output
  // after the second.
  m.on_verified(4, Tokens{100, 101});
  EXPECT_EQ(m.usage().accepted_prediction_tokens, 2);
  EXPECT_EQ(m.usage().rejected_prediction_tokens, 2);
}

TEST(PredictionMatcher, PicksThePredictionUpOnlyAtOrAfterWhereTheOutputLeftIt) {
  PredictionMatcher m({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, PredictionOptions{.confirm_n = 3});
  commit_undrafted(m, {1, 2, 3, 4, 5, 9});  // leaves it before 6
  commit_undrafted(m, {1, 2, 3});           // text from before that point
  EXPECT_FALSE(m.in_step());
  commit_undrafted(m, {6, 7});  // "6 7" is 4 tokens before where "9 1 2 3 6 7" replacing as many would put it
  EXPECT_FALSE(m.in_step());
  commit_undrafted(m, {6, 7, 8, 9});
  EXPECT_TRUE(m.in_step()) << "\"6 7 8 9\", 6 tokens off: four tokens are enough";
  Tokens drafts;
  m.propose(4, drafts);
  EXPECT_EQ(drafts, (Tokens{10}));
}

TEST(PredictionMatcher, ThePicksEvidenceGrowsWithItsDistance) {
  EXPECT_EQ(PredictionMatcher::need_at(0), 1u);
  EXPECT_EQ(PredictionMatcher::need_at(1), 2u);
  EXPECT_EQ(PredictionMatcher::need_at(3), 3u);
  EXPECT_EQ(PredictionMatcher::need_at(7), 4u);
  EXPECT_EQ(PredictionMatcher::need_at(1023), 11u);
  EXPECT_EQ(PredictionMatcher::need_at(size_t{1} << 40), PredictionMatcher::kMaxEvidence);
}

TEST(PredictionMatcher, APreambleBeforeThePredictedTextIsSkipped) {
  const Tokens prediction = twenty_tokens();
  const Tokens target = concat({{60, 61}, prediction, {kEos}});
  PredictionMatcher m(prediction, PredictionOptions{.confirm_n = 2});
  const GreedyRun run = run_greedy(m, target, 8);
  EXPECT_EQ(run.output, target);
  // Rejected: 100-107 at the first step. Out of step until "100 101 102"
  // has been committed (the text starts two tokens later than a same-length
  // edit would put it, where three tokens of agreement pick it up); then
  // 103-119 continue the prediction in step.
  EXPECT_EQ(m.usage().rejected_prediction_tokens, 8);
  EXPECT_EQ(m.usage().accepted_prediction_tokens, 17);
}

TEST(PredictionMatcher, AllocatesNothingOnceDraftsHasCapacity) {
  const Tokens prediction = twenty_tokens();
  PredictionMatcher m(prediction, PredictionOptions{.confirm_n = 3});
  Tokens drafts;
  drafts.reserve(4);
  const Tokens edit = {900, 901, 102, 103, 104};
  const int64_t before = testing::num_allocations();
  m.propose(4, drafts);
  m.on_verified(static_cast<int32_t>(drafts.size()), std::span<const TokenId>(prediction).first(2));
  commit_undrafted(m, edit);  // out of step, then in step again at 105
  m.propose(4, drafts);
  EXPECT_EQ(testing::num_allocations() - before, 0);
  EXPECT_EQ(drafts, (Tokens{105, 106, 107, 108}));
}

}  // namespace
}  // namespace met
