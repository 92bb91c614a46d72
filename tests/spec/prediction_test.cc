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
  PredictionMatcher m(prediction, PredictionOptions{.resync_n = 3});
  const GreedyRun run = run_greedy(m, target, 4);
  EXPECT_EQ(run.output, target);
  // Steps: 100-103 kept + 104; 105-107 kept, 108 rejected, 900 committed;
  // no drafts while 901, 110, 111 and 112 are committed one by one (112
  // completes "110 111 112", found at the prediction's 110); then 113-116
  // kept + 117; 118, 119 kept + EOS.
  ASSERT_EQ(run.proposals.size(), 8u);
  EXPECT_EQ(run.proposals[1], (Tokens{105, 106, 107, 108}));
  for (size_t step = 2; step < 6; ++step) EXPECT_TRUE(run.proposals[step].empty()) << step;
  EXPECT_EQ(run.proposals[6], (Tokens{113, 114, 115, 116})) << "the prediction's text after the edit";
  EXPECT_EQ(run.proposals[7], (Tokens{118, 119}));
  // Accepted: 100-107 (8) and 113-119 (7), counted as they continued the
  // prediction in step; 110-112 were committed out of step. Rejected: 108.
  EXPECT_EQ(m.usage().accepted_prediction_tokens, 15);
  EXPECT_EQ(m.usage().rejected_prediction_tokens, 1);
}

TEST(PredictionMatcher, PicksThePredictionUpAgainAfterADeletion) {
  // The output leaves out 106, 107 and 108.
  const Tokens prediction = twenty_tokens();
  const Tokens target = concat({slice(prediction, 0, 6), slice(prediction, 9, 20), {kEos}});
  PredictionMatcher m(prediction, PredictionOptions{.resync_n = 3});
  const GreedyRun run = run_greedy(m, target, 4);
  EXPECT_EQ(run.output, target);
  // 100-103 kept + 104; 105 kept, 106-108 rejected, 109 committed; 110 and
  // 111 without drafts ("109 110 111" is found at the prediction's 109);
  // 112-115 kept + 116; 117-119 kept + EOS.
  ASSERT_EQ(run.proposals.size(), 6u);
  EXPECT_EQ(run.proposals[4], (Tokens{112, 113, 114, 115}));
  EXPECT_EQ(m.usage().accepted_prediction_tokens, 6 + 8);
  EXPECT_EQ(m.usage().rejected_prediction_tokens, 3);
}

TEST(PredictionMatcher, AWrongPredictionIsRejectedOnceThenLeftAlone) {
  PredictionMatcher m({1, 2, 3, 4, 5, 6}, PredictionOptions{.resync_n = 3});
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
  PredictionMatcher m({1, 2, 3, 4, 5, 6, 7, 8}, PredictionOptions{.resync_n = 3});
  commit_undrafted(m, {1, 2, 3, 4, 5, 9});  // leaves it before 6
  commit_undrafted(m, {1, 2, 3});           // text from before that point
  EXPECT_FALSE(m.in_step());
  commit_undrafted(m, {6, 7});  // "3 6 7" is nowhere; "6 7" alone is too short
  EXPECT_FALSE(m.in_step());
  commit_undrafted(m, {6, 7, 8});
  EXPECT_TRUE(m.in_step()) << "\"6 7 8\" at the prediction's end";
  Tokens drafts = {42};
  m.propose(4, drafts);
  EXPECT_TRUE(drafts.empty()) << "nothing is left after it";
}

TEST(PredictionMatcher, APreambleBeforeThePredictedTextIsSkipped) {
  const Tokens prediction = twenty_tokens();
  const Tokens target = concat({{60, 61}, prediction, {kEos}});
  PredictionMatcher m(prediction, PredictionOptions{.resync_n = 2});
  const GreedyRun run = run_greedy(m, target, 8);
  EXPECT_EQ(run.output, target);
  // Rejected: 100-107 at the first step. Out of step until "100 101" has
  // been committed; then 102-119 continue the prediction in step.
  EXPECT_EQ(m.usage().rejected_prediction_tokens, 8);
  EXPECT_EQ(m.usage().accepted_prediction_tokens, 18);
}

TEST(PredictionMatcher, AllocatesNothingOnceDraftsHasCapacity) {
  const Tokens prediction = twenty_tokens();
  PredictionMatcher m(prediction, PredictionOptions{.resync_n = 3});
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
