// Tests for scheduler/scheduler.h over a model whose every layer reads a
// sliding window (FakeDevice's kv_window: each output reads only its last
// kv_window positions, and a plan may hold kReleasedBlock behind them): the
// blocks behind the window come back to the pool as sequences grow, the
// tokens are those of a run that keeps every block, swap, recompute and the
// prefix cache work around released blocks, every fault path still frees
// everything, and a dense model (kv_window 0) keeps all its blocks.
#include "scheduler/scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "core/fault_flag.h"
#include "scheduler_fixture.h"

namespace met {
namespace {

using testing::greedy_request;
using testing::make_prompt;
using testing::SchedFixture;
using testing::SchedFixtureOptions;

constexpr int32_t kWindow = 32;

// The greedy tokens of an uninterrupted run: each one the device's next
// token over the last `window` positions of the context (all of it for 0).
std::vector<TokenId> windowed_tokens(const testing::FakeDevice& dev, std::vector<TokenId> context, int n,
                                     int32_t window) {
  std::vector<TokenId> out;
  for (int i = 0; i < n; ++i) {
    const size_t first = window > 0 && context.size() > static_cast<size_t>(window)
                             ? context.size() - static_cast<size_t>(window)
                             : 0;
    const TokenId t = dev.default_next(std::span<const TokenId>(context).subspan(first));
    out.push_back(t);
    context.push_back(t);
  }
  return out;
}

SchedFixtureOptions windowed(int32_t num_blocks, int32_t window = kWindow) {
  SchedFixtureOptions o;
  o.device.kv_window = window;
  o.device.num_kv_blocks = num_blocks;
  return o;
}

bool has_released_entry(const StepPlan& plan) {
  for (const StepSeq& s : plan.seqs) {
    if (std::find(s.block_table.begin(), s.block_table.end(), kReleasedBlock) != s.block_table.end()) return true;
  }
  return false;
}

// Queues n greedy requests (prompts of `prompt` + 7i tokens, `outputs` each).
std::vector<uint64_t> submit_long(SchedFixture& f, int n, int32_t outputs, int prompt = 40) {
  std::vector<uint64_t> ids;
  for (int i = 0; i < n; ++i) {
    ids.push_back(
        f.submit(greedy_request(make_prompt(prompt + 7 * i, 200 + static_cast<uint32_t>(i)), outputs)));
  }
  return ids;
}

// Runs submit_long to the end; checks each request got one finish frame and
// the pool is full again; returns the tokens.
std::vector<std::vector<TokenId>> run_long(SchedFixture& f, int n, int32_t outputs, int prompt = 40) {
  const std::vector<uint64_t> ids = submit_long(f, n, outputs, prompt);
  f.run();
  std::vector<std::vector<TokenId>> out;
  for (uint64_t id : ids) {
    EXPECT_EQ(f.req.at(id).num_terminal(), 1);
    EXPECT_EQ(f.req.at(id).finishes.size(), 1u);
    out.push_back(f.req.at(id).tokens);
  }
  EXPECT_TRUE(f.pool_is_full());
  return out;
}

// 6 blocks hold 96 positions; the sequence grows to 1020 while it holds at
// most the 3 blocks its window straddles and the one the lane reserves ahead.
TEST(SchedulerWindow, BlocksComeBackToThePoolAsALongSequenceDecodesFarPastTheWindow) {
  for (bool pipeline : {true, false}) {
    SchedFixtureOptions o = windowed(6);
    o.sched.pipeline = pipeline;
    SchedFixture f(o);
    f.device->keep_plans(true);
    const std::vector<TokenId> prompt = make_prompt(20, 1);
    const uint64_t id = f.submit(greedy_request(prompt, 1000));
    int32_t most_in_use = 0;
    while (!f.sched->idle()) {
      f.sched->tick();
      most_in_use = std::max(most_in_use, f.kv->num_blocks_in_use());
    }
    const auto& r = f.req.at(id);
    ASSERT_EQ(r.finishes.size(), 1u) << "pipeline " << pipeline;
    EXPECT_EQ(r.finishes[0].finish_reason, "length");
    EXPECT_EQ(r.tokens, windowed_tokens(*f.device, prompt, 1000, kWindow));
    EXPECT_LE(most_in_use, window_min_blocks(kWindow) + 1) << "pipeline " << pipeline;
    EXPECT_TRUE(std::any_of(f.device->plans().begin(), f.device->plans().end(), has_released_entry));
    EXPECT_EQ(f.tel.num_swaps + f.tel.num_recomputes, 0);
    EXPECT_TRUE(f.pool_is_full());
  }
}

TEST(SchedulerWindow, TheReleasingRunGivesTheTokensOfARunThatKeepsEveryBlock) {
  SchedFixtureOptions keep = windowed(512);
  keep.sched.release_behind_window = false;
  SchedFixture kept(keep);
  kept.device->keep_plans(true);
  const std::vector<std::vector<TokenId>> want = run_long(kept, 6, 120);
  EXPECT_FALSE(std::any_of(kept.device->plans().begin(), kept.device->plans().end(), has_released_entry));
  EXPECT_EQ(want[0], windowed_tokens(*kept.device, make_prompt(40, 200), 120, kWindow));

  SchedFixture released(windowed(40));
  EXPECT_EQ(run_long(released, 6, 120), want);
  EXPECT_EQ(released.tel.num_swaps + released.tel.num_recomputes, 0);
}

TEST(SchedulerWindow, ADenseModelKeepsEveryBlockOfALongSequence) {
  SchedFixture f(windowed(64, /*window=*/0));
  f.device->keep_plans(true);
  const std::vector<TokenId> prompt = make_prompt(20, 2);
  const uint64_t id = f.submit(greedy_request(prompt, 200));
  int32_t most_in_use = 0;
  while (!f.sched->idle()) {
    f.sched->tick();
    most_in_use = std::max(most_in_use, f.kv->num_blocks_in_use());
  }
  EXPECT_EQ(f.req.at(id).tokens, windowed_tokens(*f.device, prompt, 200, 0));
  EXPECT_GE(most_in_use, blocks_for_tokens(20 + 199));
  EXPECT_FALSE(std::any_of(f.device->plans().begin(), f.device->plans().end(), has_released_entry));
  EXPECT_TRUE(f.pool_is_full());
}

// Six sequences of up to 4 live blocks each (3 for the window, one reserved
// ahead) share 10, so they preempt each other. Past its prompt of 100 or
// more tokens each has released blocks (behind position 100 - 32 + 1): an
// image that saved them would hold 5 blocks or more. They come back and
// continue to the tokens of a pool that never preempts.
TEST(SchedulerWindow, SequencesWithReleasedBlocksSwapOutAndBackInAndContinue) {
  SchedFixture big(windowed(512));
  const std::vector<std::vector<TokenId>> want = run_long(big, 6, 150, 100);
  SchedFixtureOptions o = windowed(10);
  o.sched.max_seqs = 6;
  o.sched.preempt = PreemptMode::kSwap;
  o.with_spill = true;
  SchedFixture f(o);
  EXPECT_EQ(run_long(f, 6, 150, 100), want);
  EXPECT_GT(f.tel.num_swaps, 0);
  ASSERT_FALSE(f.spill->saved_num_blocks().empty());
  for (int32_t n : f.spill->saved_num_blocks()) EXPECT_LE(n, window_min_blocks(kWindow) + 1);
  EXPECT_TRUE(std::filesystem::is_empty(f.spill_dir.path()));
}

TEST(SchedulerWindow, SequencesWithReleasedBlocksArePreemptedForRecomputeAndContinue) {
  SchedFixture big(windowed(512));
  const std::vector<std::vector<TokenId>> want = run_long(big, 6, 150, 100);
  SchedFixtureOptions o = windowed(10);
  o.sched.max_seqs = 6;
  SchedFixture f(o);
  EXPECT_EQ(run_long(f, 6, 150, 100), want);
  EXPECT_GT(f.tel.num_recomputes, 0);
}

// A's prompt blocks are shared as its prefill completes, before any is
// released; past that it publishes nothing, so B (A's prompt and output)
// hits A's two prompt blocks only, where a dense model hits four.
TEST(SchedulerWindow, ASequenceWithReleasedBlocksPublishesNothingPastItsFirstReleasedBlock) {
  for (int32_t window : {16, 0}) {
    SchedFixture f(windowed(64, window));
    const std::vector<TokenId> prompt = make_prompt(40, 3);
    const uint64_t a = f.submit(greedy_request(prompt, 30));
    f.run();
    std::vector<TokenId> both = prompt;
    const std::vector<TokenId>& out = f.req.at(a).tokens;
    both.insert(both.end(), out.begin(), out.end());
    const uint64_t b = f.submit(greedy_request(both, 20));
    f.run();
    ASSERT_EQ(f.req.at(b).finishes.size(), 1u);
    EXPECT_EQ(f.req.at(b).finishes[0].usage.cached_prompt_tokens, window > 0 ? 32 : 64) << "window " << window;
    EXPECT_EQ(f.req.at(b).tokens, windowed_tokens(*f.device, both, 20, window)) << "window " << window;
    EXPECT_TRUE(f.pool_is_full());
  }
}

// 4 blocks hold 64 positions; a window of 16 needs 2 of them at a time.
TEST(SchedulerWindow, APromptLongerThanThePoolIsServedThroughItsWindow) {
  SchedFixtureOptions o = windowed(4, 16);
  o.sched.max_batch_tokens = 64;
  SchedFixture f(o);
  EXPECT_EQ(f.sched->limits().kv_window, 16);
  EngineRequest r = greedy_request(make_prompt(300, 4), 50);
  ASSERT_TRUE(validate_request(r, f.sched->limits()).ok());
  const std::vector<TokenId> prompt = r.prompt;
  const uint64_t id = f.submit(std::move(r));
  f.run();
  ASSERT_EQ(f.req.at(id).finishes.size(), 1u);
  EXPECT_EQ(f.req.at(id).tokens, windowed_tokens(*f.device, prompt, 50, 16));
  EXPECT_TRUE(f.pool_is_full());
}

// Four sequences of up to 4 live blocks each (3 for the window of 32, one
// reserved ahead) share 7: they preempt each other by swap.
SchedFixtureOptions tight_windowed_swap_pool() {
  SchedFixtureOptions o = windowed(7);
  o.sched.max_seqs = 4;
  o.sched.preempt = PreemptMode::kSwap;
  o.with_spill = true;
  return o;
}

TEST(SchedulerWindow, AFailureAtAnyDeviceCallAnswersEveryRequestOnceAndFreesEveryBlock) {
  const SchedFixtureOptions o = tight_windowed_swap_pool();
  int64_t total_calls = 0;
  {
    SchedFixture clean(o);
    run_long(clean, 4, 60);
    EXPECT_GT(clean.tel.num_swaps, 0);
    total_calls = clean.device->num_calls();
  }
  ASSERT_GT(total_calls, 10);
  for (int64_t n = 0; n < total_calls; ++n) {
    ScopedFaultReset reset;
    SchedFixture f(o);
    f.device->fail_call(n);
    const std::vector<uint64_t> ids = submit_long(f, 4, 60);
    f.run();
    for (uint64_t id : ids) ASSERT_EQ(f.req.at(id).num_terminal(), 1) << "failing call " << n;
    EXPECT_TRUE(f.pool_is_full()) << "failing call " << n;
    EXPECT_TRUE(std::filesystem::is_empty(f.spill_dir.path())) << "failing call " << n;
  }
}

TEST(SchedulerWindow, AFailureAtAnySpillCallFailsAtMostItsRequestAndFreesEveryBlock) {
  const SchedFixtureOptions o = tight_windowed_swap_pool();
  int64_t total_calls = 0;
  std::vector<std::vector<TokenId>> want;
  {
    SchedFixture clean(o);
    want = run_long(clean, 4, 60);
    total_calls = clean.spill->num_calls();
  }
  ASSERT_GT(total_calls, 2);
  for (int64_t n = 0; n < total_calls; ++n) {
    SchedFixture f(o);
    f.spill->fail_call(n);
    const std::vector<uint64_t> ids = submit_long(f, 4, 60);
    f.run();
    int num_errors = 0;
    for (size_t i = 0; i < ids.size(); ++i) {
      const auto& rec = f.req.at(ids[i]);
      ASSERT_EQ(rec.num_terminal(), 1) << "failing spill call " << n;
      if (!rec.errors.empty()) {
        ++num_errors;
      } else {
        EXPECT_EQ(rec.tokens, want[i]) << "a request the failure did not touch changed, call " << n;
      }
    }
    EXPECT_LE(num_errors, 1) << "failing spill call " << n;
    EXPECT_TRUE(f.pool_is_full()) << "failing spill call " << n;
  }
}

}  // namespace
}  // namespace met
