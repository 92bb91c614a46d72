// Tests for scheduler/scheduler.h over a model with recurrent layers
// (FakeDevice with state slots and the RepickOnly policy: every output reads
// the state its slot accumulated, and the device counts any row run on a
// state that is not its sequence's). Each running sequence holds one state
// slot and gives it back on every path; pipelined and sequential runs, swap,
// recompute and a roomy pool give the same tokens; a cached prefix is
// reused only as deep as a state snapshot of it (taken by prefill steps at
// block boundaries, restored by the first step of a sequence admitted from
// it) and gives the tokens of a cold run; a failure at any device or spill
// call still answers every request once and frees every slot. With a decode
// rollback ring (state_rollback 2, kRewindable) a step launched ahead that
// the host discards is redone from the state it was launched from, and the
// tokens are those of a synchronous run; without the ring the same redo
// would run on a state past it.
#include "scheduler/scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "core/fault_flag.h"
#include "scheduler_fixture.h"

namespace met {
namespace {

using testing::greedy_request;
using testing::make_prompt;
using testing::run_many;
using testing::SchedFixture;
using testing::SchedFixtureOptions;

SchedFixtureOptions recurrent(SchedFixtureOptions o = {}) {
  o.device.num_state_slots = o.sched.max_seqs;
  o.device.policy = FedAheadPolicy::kRepickOnly;
  return o;
}

// With `snapshots` snapshot slots, one every `blocks` blocks (32 tokens).
SchedFixtureOptions snapshotting(SchedFixtureOptions o = {}, int32_t snapshots = 8, int32_t blocks = 2) {
  o = recurrent(o);
  o.device.num_state_slots += snapshots;
  o.device.num_state_snapshot_slots = snapshots;
  o.snapshot_blocks = blocks;
  return o;
}

// With a decode rollback ring deep enough for the lane: a discarded step is
// redone, as for a model without recurrent state.
SchedFixtureOptions ringed(SchedFixtureOptions o = {}, int32_t rollback = kLaneStateRollback) {
  o = recurrent(o);
  o.device.state_rollback = rollback;
  o.device.policy = FedAheadPolicy::kRewindable;
  return o;
}

// Steps that ran a sequence from a position its slot had already run past.
int count_rewinds(const testing::FakeDevice& d) {
  std::map<int32_t, int32_t> end;  // per state slot: the position its last step reached
  int n = 0;
  for (const StepPlan& p : d.plans()) {
    for (const StepSeq& s : p.seqs) {
      int32_t& e = end[s.state_slot->value()];
      if (s.num_cached > 0 && s.num_cached < e) ++n;
      e = s.num_cached + s.num_rows;
    }
  }
  return n;
}

// Requests whose masks change while a step is in flight (min_tokens lifts
// the ban on end-of-generation after 3 tokens), so the lane redoes steps.
std::vector<std::vector<TokenId>> run_stale_masks(SchedFixture& f, int n) {
  std::vector<uint64_t> ids;
  for (int i = 0; i < n; ++i) {
    EngineRequest r = greedy_request(make_prompt(20 + 5 * i, 40 + static_cast<uint32_t>(i)), 12);
    r.min_tokens = 3 + i;
    ids.push_back(f.submit(std::move(r)));
  }
  f.run();
  std::vector<std::vector<TokenId>> out;
  for (uint64_t id : ids) out.push_back(f.req.at(id).tokens);
  return out;
}

bool restores(const StepPlan& p) { return !p.state_restores.empty(); }
bool snapshots(const StepPlan& p) { return !p.state_snapshots.empty(); }
// A snapshot in a step fed from the step before it on the device.
bool snapshots_ahead(const StepPlan& p) {
  return snapshots(p) && std::any_of(p.inputs.begin(), p.inputs.end(),
                                     [](const RowInput& in) { return std::holds_alternative<FeedFromRow>(in); });
}

TEST(SchedulerRecurrent, PipelinedAndSequentialRunsGiveTheSameTokensAndFreeEverySlot) {
  std::vector<std::vector<TokenId>> want;
  for (bool pipeline : {false, true}) {
    SchedFixtureOptions o = recurrent();
    o.sched.pipeline = pipeline;
    SchedFixture f(o);
    const std::vector<std::vector<TokenId>> got = run_many(f, 6);
    EXPECT_EQ(f.device->num_state_mismatches(), 0) << "pipeline " << pipeline;
    EXPECT_EQ(f.kv->num_state_slots(), o.sched.max_seqs);
    EXPECT_EQ(f.kv->num_state_slots_in_use(), 0);
    if (want.empty()) {
      want = got;
    } else {
      EXPECT_EQ(got, want);
    }
  }
}

TEST(SchedulerRecurrent, WithARollbackRingARedoneStepRunsFromTheStateItWasLaunchedFrom) {
  SchedFixtureOptions sync = ringed();
  sync.sched.pipeline = false;
  SchedFixture want(sync);
  const std::vector<std::vector<TokenId>> expected = run_stale_masks(want, 4);
  SchedFixture f(ringed());
  f.device->keep_plans(true);
  EXPECT_EQ(run_stale_masks(f, 4), expected);
  EXPECT_GT(count_rewinds(*f.device), 0) << "no step was redone: the test exercises nothing";
  EXPECT_EQ(f.device->num_state_mismatches(), 0);
  EXPECT_EQ(f.kv->num_state_slots_in_use(), 0);
  EXPECT_TRUE(f.pool_is_full());
}

TEST(SchedulerRecurrent, WithoutTheRingTheSameRedoesWouldRunOnAStatePastTheirPosition) {
  // The control: a device that claims kRewindable but keeps one version.
  SchedFixture f(ringed({}, 0));
  f.device->keep_plans(true);
  run_stale_masks(f, 4);
  EXPECT_GT(count_rewinds(*f.device), 0);
  EXPECT_GT(f.device->num_state_mismatches(), 0);
}

TEST(SchedulerRecurrent, EachRunningSequenceHoldsItsOwnSlot) {
  SchedFixture f(recurrent());
  f.device->keep_plans(true);
  testing::submit_many(f, 6);
  int32_t most_in_use = 0;
  while (!f.sched->idle()) {
    f.sched->tick();
    most_in_use = std::max(most_in_use, f.kv->num_state_slots_in_use());
  }
  EXPECT_EQ(most_in_use, 6);
  for (const StepPlan& plan : f.device->plans()) {
    ASSERT_TRUE(validate_state_slots(plan, f.kv->num_state_slots(), 0).ok());
  }
  EXPECT_TRUE(f.pool_is_full());
}

TEST(SchedulerRecurrent, SwapAndRecomputeGiveTheTokensOfARoomyPool) {
  // Without a rollback ring (RepickOnly) and with one (kRewindable): a swap
  // image holds the state at the committed position, not one a step ran past.
  for (const bool ring : {false, true}) {
    const auto model = [&](SchedFixtureOptions o) { return ring ? ringed(o) : recurrent(o); };
    SchedFixture roomy(model({}));
    const std::vector<std::vector<TokenId>> want = run_many(roomy, 6);

    SchedFixture swapped(model(testing::tight_swap_pool()));
    EXPECT_EQ(run_many(swapped, 6), want) << "ring " << ring;
    EXPECT_GT(swapped.tel.num_swaps, 0);
    EXPECT_EQ(swapped.device->num_state_mismatches(), 0);
    EXPECT_TRUE(std::filesystem::is_empty(swapped.spill_dir.path()));

    SchedFixtureOptions tight = testing::tight_swap_pool();
    tight.sched.preempt = PreemptMode::kRecompute;
    tight.with_spill = false;
    SchedFixture recomputed(model(tight));
    EXPECT_EQ(run_many(recomputed, 6), want) << "ring " << ring;
    EXPECT_GT(recomputed.tel.num_recomputes, 0);
    EXPECT_EQ(recomputed.device->num_state_mismatches(), 0);
  }
}

// Serves `prompt` twice on `f` for `max_tokens` each; returns the prompt
// tokens the repeat found cached (-1 if it did not finish once), after
// checking it gave the first run's tokens from the states it should have.
int32_t repeat_cached_tokens(SchedFixture& f, const std::vector<TokenId>& prompt, int32_t max_tokens) {
  const uint64_t a = f.submit(greedy_request(prompt, max_tokens));
  f.run();
  const uint64_t b = f.submit(greedy_request(prompt, max_tokens));
  f.run();
  EXPECT_EQ(f.req.at(b).tokens, f.req.at(a).tokens);
  EXPECT_EQ(f.device->num_state_mismatches(), 0);
  EXPECT_TRUE(f.pool_is_full());
  const auto& finishes = f.req.at(b).finishes;
  return finishes.size() == 1 ? finishes[0].usage.cached_prompt_tokens : -1;
}

// Without snapshot slots a repeated prompt is prefilled again: reusing its
// KV without the state at its end would run the rest on an empty state.
TEST(SchedulerRecurrent, WithoutSnapshotsARepeatedPromptIsNotServedFromCachedBlocksAlone) {
  SchedFixture f(recurrent());
  EXPECT_EQ(repeat_cached_tokens(f, make_prompt(70, 9), 10), 0);
}

// 150 prompt tokens: snapshots after 32, 64, 96 and 128 (the interval), 144
// (the prompt's last full block) and 160 (a block boundary its output
// crossed); the repeat resumes at 144 (the deepest on its prompt's chain)
// and gives the cold tokens.
TEST(SchedulerRecurrent, ARepeatedPromptResumesFromTheDeepestStateSnapshot) {
  const std::vector<TokenId> prompt = make_prompt(150, 9);
  SchedFixture cold(recurrent());
  const uint64_t c = cold.submit(greedy_request(prompt, 12));
  cold.run();
  for (bool pipeline : {false, true}) {
    SchedFixtureOptions o = snapshotting();
    o.sched.pipeline = pipeline;
    SchedFixture f(o);
    f.device->keep_plans(true);
    const uint64_t a = f.submit(greedy_request(prompt, 12));
    f.run();
    EXPECT_EQ(f.kv->num_state_snapshots(), 6);
    EXPECT_TRUE(std::any_of(f.device->plans().begin(), f.device->plans().end(), snapshots));
    const uint64_t b = f.submit(greedy_request(prompt, 12));
    f.run();
    ASSERT_EQ(f.req.at(b).finishes.size(), 1u);
    EXPECT_EQ(f.req.at(a).finishes[0].usage.cached_prompt_tokens, 0);
    EXPECT_EQ(f.req.at(b).finishes[0].usage.cached_prompt_tokens, 144) << "pipeline " << pipeline;
    EXPECT_EQ(f.req.at(a).tokens, cold.req.at(c).tokens);
    EXPECT_EQ(f.req.at(b).tokens, cold.req.at(c).tokens);
    EXPECT_EQ(std::count_if(f.device->plans().begin(), f.device->plans().end(), restores), 1);
    EXPECT_EQ(f.device->num_state_mismatches(), 0);
    EXPECT_TRUE(f.pool_is_full());
  }
}

// Serves `prompt` on `f` for 12 tokens; returns the prompt tokens it found
// cached (-1 if it did not finish once), after checking it gave the tokens
// of a cold run from the states it should have.
int32_t served_like_cold(SchedFixture& f, const std::vector<TokenId>& prompt) {
  const uint64_t b = f.submit(greedy_request(prompt, 12));
  f.run();
  SchedFixture cold(recurrent());
  const uint64_t c = cold.submit(greedy_request(prompt, 12));
  cold.run();
  EXPECT_EQ(f.req.at(b).tokens, cold.req.at(c).tokens);
  EXPECT_EQ(f.device->num_state_mismatches(), 0);
  const auto& finishes = f.req.at(b).finishes;
  return finishes.size() == 1 ? finishes[0].usage.cached_prompt_tokens : -1;
}

// Runs `prompt` for `out` tokens, then its next turn (the prompt, that
// output, 20 more tokens): the next turn must find `want_cached` tokens
// cached and give the tokens of a cold run.
void expect_next_turn_resumes(const std::vector<TokenId>& prompt, int32_t out, bool pipeline, int32_t want_cached) {
  SchedFixtureOptions o = snapshotting({}, /*snapshots=*/8, /*blocks=*/4);
  o.sched.pipeline = pipeline;
  SchedFixture f(o);
  f.device->keep_plans(true);
  const uint64_t a = f.submit(greedy_request(prompt, out));
  f.run();
  ASSERT_EQ(f.req.at(a).tokens.size(), static_cast<size_t>(out));
  EXPECT_EQ(f.kv->num_state_snapshots(), 4) << "pipeline " << pipeline << " out " << out;
  EXPECT_EQ(std::any_of(f.device->plans().begin(), f.device->plans().end(), snapshots_ahead), pipeline);
  std::vector<TokenId> next = prompt;
  next.insert(next.end(), f.req.at(a).tokens.begin(), f.req.at(a).tokens.end());
  const std::vector<TokenId> tail = make_prompt(20, 31);
  next.insert(next.end(), tail.begin(), tail.end());
  EXPECT_EQ(served_like_cold(f, next), want_cached) << "pipeline " << pipeline << " out " << out;
  EXPECT_TRUE(f.pool_is_full());
}

// A conversation's next turn (the first turn's prompt and output, then
// more) resumes from the first turn's rolling snapshot: at the last block
// boundary its output crossed. Every 4 blocks (64 tokens): snapshots at 64,
// 128, 144 (the prompt's last block before its end), then 160 rekeyed to
// 176 as the output grows to 189 (40 out) or 191 (42 out) computed tokens.
// The same with the lane on, where the snapshot is taken by a step launched
// before its input was committed; with 42 out, the step launched past the
// last token crosses 192 and is dropped, which must not cost the one at 176.
TEST(SchedulerRecurrent, AConversationsNextTurnResumesFromItsLastOutputBlock) {
  const std::vector<TokenId> prompt = make_prompt(150, 9);
  for (const int32_t out : {40, 42}) {
    for (bool pipeline : {false, true}) {
      expect_next_turn_resumes(prompt, out, pipeline, /*want_cached=*/176);
    }
  }
}

// A prompt of a whole number of intervals (64 tokens, every 32) is
// snapshot at its last block before the end too: its repeat, which must
// compute a token, resumes after 48.
TEST(SchedulerRecurrent, ARepeatOfABlockAlignedPromptResumesAtItsLastBlock) {
  SchedFixture f(snapshotting());
  EXPECT_EQ(repeat_cached_tokens(f, make_prompt(64, 19), 4), 48);
}

// A prompt shorter than the interval (32 tokens here) is prefilled in one
// step: its last full block is not worth a step of its own.
TEST(SchedulerRecurrent, APromptShorterThanTheIntervalIsPrefilledInOneStep) {
  SchedFixture f(snapshotting());
  f.device->keep_plans(true);
  f.submit(greedy_request(make_prompt(28, 9), 4));
  f.run();
  ASSERT_FALSE(f.device->plans().empty());
  const StepPlan& first = f.device->plans().front();
  ASSERT_EQ(first.seqs.size(), 1u);
  EXPECT_EQ(first.seqs[0].num_rows, 28);
  EXPECT_TRUE(first.state_snapshots.empty());
  EXPECT_TRUE(f.pool_is_full());
}

// B shares A's first 100 tokens: it resumes from the snapshot at 96.
TEST(SchedulerRecurrent, APromptSharingAPrefixResumesFromTheLastSnapshotItShares) {
  SchedFixture f(snapshotting());
  const std::vector<TokenId> a_prompt = make_prompt(150, 9);
  std::vector<TokenId> b_prompt(a_prompt.begin(), a_prompt.begin() + 100);
  const std::vector<TokenId> tail = make_prompt(30, 77);
  b_prompt.insert(b_prompt.end(), tail.begin(), tail.end());
  f.submit(greedy_request(a_prompt, 5));
  f.run();
  EXPECT_EQ(served_like_cold(f, b_prompt), 96);
}

// Two snapshot slots for many prompts: snapshots are evicted (least recently
// used first) and every request still gets its cold tokens.
TEST(SchedulerRecurrent, EvictedSnapshotsLeaveEveryRequestWithItsColdTokens) {
  SchedFixture f(snapshotting({}, /*snapshots=*/2, /*blocks=*/1));
  SchedFixture cold(recurrent());
  for (int round = 0; round < 2; ++round) {
    for (uint32_t seed = 0; seed < 4; ++seed) {
      const std::vector<TokenId> prompt = make_prompt(60, 40 + seed);
      const uint64_t id = f.submit(greedy_request(prompt, 8));
      f.run();
      const uint64_t c = cold.submit(greedy_request(prompt, 8));
      cold.run();
      EXPECT_EQ(f.req.at(id).tokens, cold.req.at(c).tokens) << "round " << round << " seed " << seed;
    }
  }
  EXPECT_EQ(f.kv->num_state_snapshots(), 2);
  EXPECT_EQ(f.device->num_state_mismatches(), 0);
  EXPECT_TRUE(f.pool_is_full());
}

TEST(SchedulerRecurrent, SwapAndRecomputeWithSnapshotsGiveTheTokensOfARoomyPool) {
  SchedFixture roomy(recurrent());
  const std::vector<std::vector<TokenId>> want = run_many(roomy, 6);
  SchedFixture swapped(snapshotting(testing::tight_swap_pool(), 4, 1));
  EXPECT_EQ(run_many(swapped, 6), want);
  EXPECT_GT(swapped.tel.num_swaps, 0);
  EXPECT_EQ(swapped.device->num_state_mismatches(), 0);
  SchedFixtureOptions tight = testing::tight_swap_pool();
  tight.sched.preempt = PreemptMode::kRecompute;
  tight.with_spill = false;
  SchedFixture recomputed(snapshotting(tight, 4, 1));
  EXPECT_EQ(run_many(recomputed, 6), want);
  EXPECT_GT(recomputed.tel.num_recomputes, 0);
  EXPECT_EQ(recomputed.device->num_state_mismatches(), 0);
}

TEST(SchedulerRecurrent, AFailureAtAnyDeviceCallAnswersEveryRequestOnceAndFreesEverySlot) {
  testing::for_each_failing_call(snapshotting(testing::tight_swap_pool(), 4, 1), testing::FaultPort::kDevice, 10,
                                 [](SchedFixture& f, int64_t n) {
                                   EXPECT_TRUE(std::filesystem::is_empty(f.spill_dir.path())) << "failing call " << n;
                                 });
}

TEST(SchedulerRecurrent, AFailureAtAnySpillCallAnswersEveryRequestOnceAndFreesEverySlot) {
  testing::for_each_failing_call(recurrent(testing::tight_swap_pool()), testing::FaultPort::kSpill, 2,
                                 [](SchedFixture& f, int64_t n) {
                                   EXPECT_EQ(f.device->num_state_mismatches(), 0) << "failing call " << n;
                                 });
}

TEST(SchedulerRecurrent, MoreSequencesThanStateSlotsIsRefusedAtCreation) {
  SchedFixtureOptions o = recurrent();
  o.device.num_state_slots = o.sched.max_seqs - 1;
  testing::FakeDevice device(o.device);
  DevPort port(device);
  KvManager kv(device);
  testing::RecordingReq req;
  testing::CountingTel tel;
  FakeClock clock;
  Result<std::unique_ptr<Scheduler>> s =
      Scheduler::create(SchedIo{port, kv, req, tel, clock}, nullptr, testing::test_tokenizer(), o.sched);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("recurrent-state slots"), std::string::npos) << s.status().message();
}

}  // namespace
}  // namespace met
