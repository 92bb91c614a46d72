// Tests of spec/draft_model.h over a FakeDevice, whose next token is a hash of
// the tokens read back from the KV blocks: a draft computed on a stale or
// misplaced KV differs from the greedy continuation of the sequence's tokens.
#include "spec/draft_model.h"

#include <gtest/gtest.h>

#include <vector>

#include "testing/fake_device.h"

namespace met {
namespace draft_model_test {
namespace {

using testing::FakeDevice;
using testing::FakeDeviceOptions;

// The fake's greedy continuation of `tokens`, n tokens long.
std::vector<TokenId> greedy(const FakeDevice& device, std::vector<TokenId> tokens, int32_t n) {
  std::vector<TokenId> out;
  for (int32_t i = 0; i < n; ++i) {
    out.push_back(device.default_next(tokens));
    tokens.push_back(out.back());
  }
  return out;
}

std::vector<TokenId> prompt(int32_t n, TokenId first) {
  std::vector<TokenId> t;
  for (int32_t i = 0; i < n; ++i) t.push_back(static_cast<TokenId>((first + 7 * i) % 500));
  return t;
}

// A device of `blocks` KV blocks (and the given limits).
FakeDeviceOptions device_options(int32_t blocks, int32_t max_rows = 512, int32_t max_seqs = 64,
                                 int32_t max_context = 4096) {
  FakeDeviceOptions o;
  o.num_kv_blocks = blocks;
  o.max_rows = max_rows;
  o.max_seqs = max_seqs;
  o.max_context = max_context;
  return o;
}

struct Seq {
  uint64_t id;
  std::vector<TokenId> tokens;
  std::vector<TokenId> drafts;
};

void propose(DraftModel& model, std::vector<Seq>& seqs, int32_t num_drafts) {
  std::vector<DraftAsk> asks;
  for (Seq& s : seqs) asks.push_back({s.id, s.tokens, num_drafts, &s.drafts});
  model.propose(asks);
}

TEST(DraftModel, DraftsAreTheGreedyContinuationOfEachSequenceBatchedAndChunked) {
  // Prompts longer than a step's rows are caught up in chunks.
  FakeDevice device(device_options(64, 32, 4));
  DraftModel model(device);
  std::vector<Seq> seqs = {{1, prompt(70, 3), {}}, {2, prompt(5, 11), {}}, {3, prompt(33, 40), {}}};
  propose(model, seqs, 4);
  for (const Seq& s : seqs) EXPECT_EQ(s.drafts, greedy(device, s.tokens, 4)) << "seq " << s.id;
  EXPECT_LE(device.max_rows_seen(), 32);
  // 108 prompt rows in chunks of at most 32 (at least 4 steps), then 3 more steps.
  EXPECT_GE(model.num_steps(), 4 + 3);
}

TEST(DraftModel, ContinuesFromTheFirstTokenThatDiffersAfterAVerifyStep) {
  FakeDevice device(device_options(64));
  DraftModel model(device);
  std::vector<Seq> seqs = {{7, prompt(20, 1), {}}};
  propose(model, seqs, 4);
  const std::vector<TokenId> first = seqs[0].drafts;
  ASSERT_EQ(first.size(), 4u);
  // Two drafts accepted, the third replaced by another token: the drafter's
  // KV beyond the shared prefix is stale and must be overwritten.
  seqs[0].tokens.insert(seqs[0].tokens.end(), first.begin(), first.begin() + 2);
  seqs[0].tokens.push_back(static_cast<TokenId>((first[2] + 1) % 500));
  const int64_t steps_before = device.num_steps();
  propose(model, seqs, 3);
  EXPECT_EQ(seqs[0].drafts, greedy(device, seqs[0].tokens, 3));
  // The catch-up ran the one token it had not seen (one step), then two chained steps.
  EXPECT_EQ(device.num_steps() - steps_before, 3);
  // Every draft accepted and a bonus token: the catch-up runs the last draft and it.
  const std::vector<TokenId> second = seqs[0].drafts;
  seqs[0].tokens.insert(seqs[0].tokens.end(), second.begin(), second.end());
  seqs[0].tokens.push_back(device.default_next(seqs[0].tokens));
  propose(model, seqs, 2);
  EXPECT_EQ(seqs[0].drafts, greedy(device, seqs[0].tokens, 2));
  // A sequence whose tokens the drafter already holds entirely runs its last token again.
  propose(model, seqs, 1);
  EXPECT_EQ(seqs[0].drafts, greedy(device, seqs[0].tokens, 1));
}

TEST(DraftModel, ASequenceThePoolCannotHoldGetsNoDraftsAndHoldsNothing) {
  // 6 blocks of 16 positions: the first sequence takes 3, the second needs 4.
  FakeDevice device(device_options(6));
  DraftModel model(device);
  std::vector<Seq> seqs = {{1, prompt(40, 2), {}}, {2, prompt(60, 9), {}}};
  propose(model, seqs, 4);
  EXPECT_EQ(seqs[0].drafts, greedy(device, seqs[0].tokens, 4));
  EXPECT_TRUE(seqs[1].drafts.empty());
  EXPECT_EQ(model.num_free_blocks(), 3);
  // It stays without drafts while it runs, even when blocks free up.
  std::vector<Seq> second = {seqs[1]};
  model.retain_only(std::vector<uint64_t>{2});
  EXPECT_EQ(model.num_free_blocks(), 6);
  propose(model, second, 4);
  EXPECT_TRUE(second[0].drafts.empty());
  // A new sequence with the same tokens is drafted.
  second[0].id = 3;
  propose(model, second, 4);
  EXPECT_EQ(second[0].drafts, greedy(device, second[0].tokens, 4));
}

TEST(DraftModel, RetainOnlyGivesBackTheBlocksOfSequencesThatLeft) {
  FakeDevice device(device_options(32));
  DraftModel model(device);
  std::vector<Seq> seqs = {{1, prompt(40, 2), {}}, {2, prompt(17, 9), {}}, {3, prompt(3, 5), {}}};
  propose(model, seqs, 4);
  EXPECT_EQ(model.num_tracked(), 3);
  EXPECT_EQ(model.num_free_blocks(), 32 - (3 + 2 + 1));
  model.retain_only(std::vector<uint64_t>{3, 99});
  EXPECT_EQ(model.num_tracked(), 1);
  EXPECT_EQ(model.num_free_blocks(), 31);
  model.retain_only({});
  EXPECT_EQ(model.num_free_blocks(), 32);
  EXPECT_EQ(model.num_tracked(), 0);
}

TEST(DraftModel, AskPastTheDraftModelsContextGetsNone) {
  FakeDevice device(device_options(32, 512, 64, 64));
  DraftModel model(device);
  std::vector<Seq> seqs = {{1, prompt(62, 2), {}}};
  propose(model, seqs, 4);  // positions up to 62 - 1 + 3 = 64: one too many
  EXPECT_TRUE(seqs[0].drafts.empty());
  propose(model, seqs, 3);
  EXPECT_EQ(seqs[0].drafts, greedy(device, seqs[0].tokens, 3));
}

TEST(DraftModel, AFailedStepTurnsDraftingOffAndGivesEveryBlockBack) {
  FakeDevice device(device_options(32));
  DraftModel model(device);
  std::vector<Seq> seqs = {{1, prompt(20, 2), {}}, {2, prompt(9, 4), {}}};
  propose(model, seqs, 2);
  ASSERT_EQ(seqs[0].drafts.size(), 2u);
  device.fail_call(device.num_calls() + 1);  // the next await
  for (Seq& s : seqs) s.tokens.push_back(s.drafts[0]);
  propose(model, seqs, 2);
  EXPECT_TRUE(model.failed());
  for (const Seq& s : seqs) EXPECT_TRUE(s.drafts.empty());
  EXPECT_EQ(model.num_free_blocks(), 32);
  propose(model, seqs, 2);
  for (const Seq& s : seqs) EXPECT_TRUE(s.drafts.empty());
}

// The fake's next token without the state's two entries it reads.
FakeDevice::NextToken past_state(const FakeDevice& device) {
  return [&device](std::span<const TokenId> ctx) { return device.default_next(ctx.first(ctx.size() - 2)); };
}

// A draft model with recurrent layers (FakeDevice state slots whose ring
// keeps `rollback` older versions; its next token ignores the state, whose
// misuse num_state_mismatches counts): after two drafts are accepted and the
// third replaced, the catch-up starts from the state after the accepted
// ones with a ring deep enough, from token 0 without one; either way the
// drafts are the greedy continuation.
TEST(DraftModel, ARecurrentDraftModelRewindsItsStateToTheFirstTokenThatDiffers) {
  for (const int32_t rollback : {4, 0}) {
    FakeDeviceOptions o = device_options(64);
    o.num_state_slots = 2;
    o.state_rollback = rollback;
    FakeDevice device(o);
    device.set_next_token(past_state(device));
    device.keep_plans(true);
    DraftModel model(device);
    std::vector<Seq> seqs = {{7, prompt(20, 1), {}}};
    propose(model, seqs, 4);
    const std::vector<TokenId> first = seqs[0].drafts;
    ASSERT_EQ(first, greedy(device, seqs[0].tokens, 4));
    seqs[0].tokens.insert(seqs[0].tokens.end(), first.begin(), first.begin() + 2);
    seqs[0].tokens.push_back(static_cast<TokenId>((first[2] + 1) % 500));
    const size_t before = device.plans().size();
    propose(model, seqs, 3);
    EXPECT_EQ(seqs[0].drafts, greedy(device, seqs[0].tokens, 3)) << "rollback " << rollback;
    ASSERT_GT(device.plans().size(), before);
    EXPECT_EQ(device.plans()[before].seqs[0].num_cached, rollback > 0 ? 22 : 0) << "rollback " << rollback;
    EXPECT_EQ(device.num_state_mismatches(), 0) << "rollback " << rollback;
  }
}

// Each sequence takes a state slot of its own: one more sequence than slots
// gets no drafts while it runs; a slot given back serves a new sequence.
TEST(DraftModel, ASequenceWithoutAFreeStateSlotGetsNoDrafts) {
  FakeDeviceOptions o = device_options(64);
  o.num_state_slots = 1;
  FakeDevice device(o);
  device.set_next_token(past_state(device));
  DraftModel model(device);
  std::vector<Seq> seqs = {{1, prompt(10, 2), {}}, {2, prompt(12, 9), {}}};
  propose(model, seqs, 2);
  EXPECT_EQ(seqs[0].drafts, greedy(device, seqs[0].tokens, 2));
  EXPECT_TRUE(seqs[1].drafts.empty());
  model.retain_only(std::vector<uint64_t>{2});
  std::vector<Seq> next = {{3, prompt(12, 9), {}}};
  propose(model, next, 2);
  EXPECT_EQ(next[0].drafts, greedy(device, next[0].tokens, 2));
  EXPECT_EQ(device.num_state_mismatches(), 0);
}

}  // namespace
}  // namespace draft_model_test
}  // namespace met
