// The scheduler's telemetry (scheduler/io.h's TelPort): each request's
// lifecycle events in order with its tenant, step records that split prompt
// rows from decode rows, preemptions reported with the bytes they moved, and
// Scheduler::describe's view of the queues. FakeDevice, FakeClock.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "scheduler_fixture.h"

namespace met {
namespace {

using testing::greedy_request;
using testing::make_prompt;
using testing::SchedFixture;
using testing::SchedFixtureOptions;
using Kind = RequestEventKind;

TEST(SchedulerTelemetry, ARequestReportsQueuedAdmittedFirstTokenFinishedWithItsTenant) {
  SchedFixture f;
  EngineRequest r = greedy_request(make_prompt(20, 1), 5);
  r.tenant = "acme";
  const uint64_t id = f.submit(std::move(r));
  f.run();
  EXPECT_EQ(f.tel.kinds_of(id),
            (std::vector<Kind>{Kind::kQueued, Kind::kAdmitted, Kind::kFirstToken, Kind::kFinished}));
  for (const auto& e : f.tel.events) EXPECT_EQ(e.tenant, "acme");
  EXPECT_EQ(f.tel.events.back().finish_reason, "length");
  EXPECT_EQ(f.tel.events.back().output_tokens, 5);
}

TEST(SchedulerTelemetry, AnAdmissionReportsThePromptTokensThePrefixCacheServed) {
  SchedFixture f;
  const std::vector<TokenId> prompt = make_prompt(40, 7);
  f.submit(greedy_request(prompt, 2));
  f.run();
  const uint64_t second = f.submit(greedy_request(prompt, 2));
  f.run();
  int admissions = 0;
  for (const auto& e : f.tel.events) {
    if (e.id == second && e.kind == Kind::kAdmitted) {
      EXPECT_EQ(e.cached_tokens, 32);  // two full blocks
      ++admissions;
    }
  }
  EXPECT_EQ(admissions, 1);
}

int64_t sum_of(const std::vector<StepRecord>& steps, int32_t StepRecord::*field) {
  int64_t n = 0;
  for (const StepRecord& s : steps) n += s.*field;
  return n;
}

TEST(SchedulerTelemetry, StepRecordsCountPromptRowsAsPrefillAndSampledRowsAsDecode) {
  SchedFixtureOptions o;
  o.sched.pipeline = false;
  SchedFixture f(o);
  f.submit(greedy_request(make_prompt(20, 1), 5));
  f.submit(greedy_request(make_prompt(9, 2), 3));
  f.run();
  EXPECT_EQ(sum_of(f.tel.steps, &StepRecord::prefill_tokens), 29);
  // The first token of each comes from its prompt's last row; the rest from decode rows.
  EXPECT_EQ(sum_of(f.tel.steps, &StepRecord::decode_tokens), 4 + 2);
  for (const StepRecord& s : f.tel.steps) EXPECT_EQ(s.prefill_tokens + s.decode_tokens, s.num_rows);
}

// A request's events, kind by kind, across a run with preemptions.
std::map<uint64_t, std::vector<Kind>> events_by_request(const testing::CountingTel& tel) {
  std::map<uint64_t, std::vector<Kind>> out;
  for (const auto& e : tel.events) out[e.id].push_back(e.kind);
  return out;
}

TEST(SchedulerTelemetry, ASwappedRequestReportsSwappedThenResumedAndTheSpillBytesBothWays) {
  SchedFixture f(testing::tight_swap_pool());
  testing::run_many(f, 6);
  ASSERT_GT(f.tel.num_swaps, 0);
  EXPECT_EQ(f.tel.num_spills, f.tel.num_swaps);
  EXPECT_EQ(f.tel.num_restores, f.tel.num_swaps);
  EXPECT_GT(f.tel.spill_bytes, 0);
  EXPECT_EQ(f.tel.restore_bytes, f.tel.spill_bytes);
  for (const auto& [id, kinds] : events_by_request(f.tel)) {
    EXPECT_EQ(kinds.front(), Kind::kQueued) << id;
    EXPECT_EQ(kinds.back(), Kind::kFinished) << id;
    for (size_t i = 0; i < kinds.size(); ++i) {
      if (kinds[i] == Kind::kSwapped) {
        ASSERT_LT(i + 1, kinds.size());
        EXPECT_EQ(kinds[i + 1], Kind::kResumed) << id;
      }
    }
  }
}

TEST(SchedulerTelemetry, ARequestPreemptedForRecomputeReportsPreemptedThenResumed) {
  SchedFixtureOptions o = testing::tight_swap_pool();
  o.sched.preempt = PreemptMode::kRecompute;
  o.with_spill = false;
  SchedFixture f(o);
  testing::run_many(f, 6);
  ASSERT_GT(f.tel.num_recomputes, 0);
  int preempted = 0;
  for (const auto& [id, kinds] : events_by_request(f.tel)) {
    EXPECT_EQ(std::count(kinds.begin(), kinds.end(), Kind::kAdmitted), 1) << id;
    EXPECT_EQ(std::count(kinds.begin(), kinds.end(), Kind::kFirstToken), 1) << id;
    const auto n = std::count(kinds.begin(), kinds.end(), Kind::kPreempted);
    EXPECT_EQ(std::count(kinds.begin(), kinds.end(), Kind::kResumed), n) << id;
    preempted += static_cast<int>(n);
  }
  EXPECT_EQ(preempted, f.tel.num_recomputes);
}

TEST(SchedulerTelemetry, DescribeListsWaitingAndRunningRequestsWithTheirOutputAndBlocks) {
  SchedFixtureOptions o;
  o.sched.max_seqs = 1;
  o.sched.pipeline = false;
  SchedFixture f(o);
  const uint64_t first = f.submit(greedy_request(make_prompt(20, 1), 8));
  const uint64_t second = f.submit(greedy_request(make_prompt(20, 2), 8));
  f.sched->tick();  // the first is prefilled and has its first token
  f.sched->tick();
  std::vector<SeqProgress> live;
  f.sched->describe(live);
  ASSERT_EQ(live.size(), 2u);
  std::sort(live.begin(), live.end(), [](const SeqProgress& a, const SeqProgress& b) { return a.id < b.id; });
  EXPECT_EQ(live[0].id.value(), first);
  EXPECT_EQ(live[0].phase, SeqPhase::kRunning);
  EXPECT_EQ(live[0].output_tokens, 2);
  EXPECT_EQ(live[0].kv_blocks, 2);  // 21 tokens' KV
  EXPECT_EQ(live[1].id.value(), second);
  EXPECT_EQ(live[1].phase, SeqPhase::kWaiting);
  EXPECT_EQ(live[1].kv_blocks, 0);
  f.run();
}

}  // namespace
}  // namespace met
