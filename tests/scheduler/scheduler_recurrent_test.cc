// Tests for scheduler/scheduler.h over a model with recurrent layers
// (FakeDevice with state slots and the RepickOnly policy: every output reads
// the state its slot accumulated, and the device counts any row run on a
// state that is not its sequence's). Each running sequence holds one state
// slot and gives it back on every path; pipelined and sequential runs, swap,
// recompute and a roomy pool give the same tokens; a cached prefix is not
// reused without its state; a failure at any device or spill call still
// answers every request once and frees every slot.
#include "scheduler/scheduler.h"

#include <gtest/gtest.h>

#include <filesystem>

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
    ASSERT_TRUE(validate_state_slots(plan, f.kv->num_state_slots()).ok());
  }
  EXPECT_TRUE(f.pool_is_full());
}

TEST(SchedulerRecurrent, SwapAndRecomputeGiveTheTokensOfARoomyPool) {
  SchedFixture roomy(recurrent());
  const std::vector<std::vector<TokenId>> want = run_many(roomy, 6);

  SchedFixture swapped(recurrent(testing::tight_swap_pool()));
  EXPECT_EQ(run_many(swapped, 6), want);
  EXPECT_GT(swapped.tel.num_swaps, 0);
  EXPECT_EQ(swapped.device->num_state_mismatches(), 0);
  EXPECT_TRUE(std::filesystem::is_empty(swapped.spill_dir.path()));

  SchedFixtureOptions tight = testing::tight_swap_pool();
  tight.sched.preempt = PreemptMode::kRecompute;
  tight.with_spill = false;
  SchedFixture recomputed(recurrent(tight));
  EXPECT_EQ(run_many(recomputed, 6), want);
  EXPECT_GT(recomputed.tel.num_recomputes, 0);
  EXPECT_EQ(recomputed.device->num_state_mismatches(), 0);
}

// Until state snapshots are cached with the blocks, a repeated prompt is
// prefilled again: reusing its KV without the state at its end would run
// the rest on an empty state.
TEST(SchedulerRecurrent, ARepeatedPromptIsNotServedFromCachedBlocksAlone) {
  SchedFixture f(recurrent());
  const std::vector<TokenId> prompt = make_prompt(70, 9);
  const uint64_t a = f.submit(greedy_request(prompt, 10));
  f.run();
  const uint64_t b = f.submit(greedy_request(prompt, 10));
  f.run();
  ASSERT_EQ(f.req.at(b).finishes.size(), 1u);
  EXPECT_EQ(f.req.at(b).finishes[0].usage.cached_prompt_tokens, 0);
  EXPECT_EQ(f.req.at(b).tokens, f.req.at(a).tokens);
  EXPECT_EQ(f.device->num_state_mismatches(), 0);
  EXPECT_TRUE(f.pool_is_full());
}

TEST(SchedulerRecurrent, AFailureAtAnyDeviceCallAnswersEveryRequestOnceAndFreesEverySlot) {
  const SchedFixtureOptions o = recurrent(testing::tight_swap_pool());
  int64_t total_calls = 0;
  {
    SchedFixture clean(o);
    run_many(clean, 6);
    total_calls = clean.device->num_calls();
  }
  ASSERT_GT(total_calls, 10);
  for (int64_t n = 0; n < total_calls; ++n) {
    ScopedFaultReset reset;
    SchedFixture f(o);
    f.device->fail_call(n);
    const std::vector<uint64_t> ids = testing::submit_many(f, 6);
    f.run();
    for (uint64_t id : ids) ASSERT_EQ(f.req.at(id).num_terminal(), 1) << "failing call " << n;
    EXPECT_TRUE(f.pool_is_full()) << "failing call " << n;
    EXPECT_TRUE(std::filesystem::is_empty(f.spill_dir.path())) << "failing call " << n;
  }
}

TEST(SchedulerRecurrent, AFailureAtAnySpillCallAnswersEveryRequestOnceAndFreesEverySlot) {
  const SchedFixtureOptions o = recurrent(testing::tight_swap_pool());
  int64_t total_calls = 0;
  {
    SchedFixture clean(o);
    run_many(clean, 6);
    total_calls = clean.spill->num_calls();
  }
  ASSERT_GT(total_calls, 2);
  for (int64_t n = 0; n < total_calls; ++n) {
    ScopedFaultReset reset;
    SchedFixture f(o);
    f.spill->fail_call(n);
    const std::vector<uint64_t> ids = testing::submit_many(f, 6);
    f.run();
    for (uint64_t id : ids) ASSERT_EQ(f.req.at(id).num_terminal(), 1) << "failing call " << n;
    EXPECT_TRUE(f.pool_is_full()) << "failing call " << n;
    EXPECT_EQ(f.device->num_state_mismatches(), 0) << "failing call " << n;
  }
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
