// Tests for scheduler/speculation.h through the scheduler, on a FakeDevice
// whose next token is a function of the last tokens its KV holds (so outputs
// fall into repeating runs that prompt lookup drafts from, with a break
// every so often that rejects a draft). Greedy output with speculation on is
// the output with it off, token for token, pipelined or not, in a roomy pool
// and in one that swaps or recomputes, with max_tokens and EOS falling inside
// a draft; a verify step's rejected rows give their blocks back; a step fails
// at any device call and every request still gets one terminal frame with
// the pool full again; sequences with recurrent state get drafts only as
// many as the device keeps states for, and keep their output (MTP drafts:
// speculation_mtp_test.cc; sampled rows, logprobs, grammars:
// speculation_sampled_test.cc). A request's predicted output (OpenAI's
// Predicted Outputs) is drafted without prompt lookup: one equal to the
// output is accepted whole (rejected 0), one with an edit is picked up again
// after it; either way the output is the output without it.
#include "scheduler/speculation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/fault_flag.h"
#include "scheduler_fixture.h"
#include "speculation_support.h"

namespace met {
namespace {

using testing::greedy_request;
using testing::make_prompt;
using testing::SchedFixture;
using testing::SchedFixtureOptions;

using spec_testing::kEos;
using spec_testing::next_token;
using spec_testing::run_six;
using spec_testing::SpecRun;
using spec_testing::with_spec;

TEST(Speculation, GreedyOutputIsTheOutputWithoutItPipelinedOrNot) {
  const SpecRun off = run_six(with_spec({}, 0, false), 90);
  for (bool pipeline : {false, true}) {
    const SpecRun on = run_six(with_spec({}, 4, pipeline), 90);
    EXPECT_EQ(on.tokens, off.tokens) << "pipeline " << pipeline;
    EXPECT_GT(on.accepted, 0) << "pipeline " << pipeline;
    EXPECT_LT(on.accepted, on.drafted) << "some drafts are rejected";
    EXPECT_LT(on.num_steps, off.num_steps) << "accepted drafts save steps";
  }
  EXPECT_EQ(off.drafted, 0);
}

// Budgets 13..18 and an EOS at context length 75 end outputs inside drafts.
TEST(Speculation, MaxTokensAndEosInsideADraftEndTheOutputWhereTheyWould) {
  for (int32_t max_tokens : {13, 60}) {
    const SpecRun off = run_six(with_spec({}, 0, false), max_tokens, 75);
    const SpecRun on = run_six(with_spec({}, 6, false), max_tokens, 75);
    EXPECT_EQ(on.tokens, off.tokens) << max_tokens;
    for (size_t i = 0; i < on.tokens.size(); ++i) {
      EXPECT_LE(on.tokens[i].size(), static_cast<size_t>(max_tokens) + i);
    }
    EXPECT_GT(on.accepted, 0);
  }
}

TEST(Speculation, ATightPoolThatSwapsOrRecomputesGivesTheRoomyOutput) {
  const SpecRun roomy = run_six(with_spec({}, 0, false), 90);
  for (PreemptMode mode : {PreemptMode::kSwap, PreemptMode::kRecompute}) {
    SchedFixtureOptions o = testing::tight_swap_pool();
    o.sched.preempt = mode;
    o.with_spill = mode == PreemptMode::kSwap;
    for (bool pipeline : {false, true}) {
      const SpecRun tight = run_six(with_spec(o, 4, pipeline), 90);
      EXPECT_EQ(tight.tokens, roomy.tokens) << "mode " << static_cast<int>(mode) << " pipeline " << pipeline;
      EXPECT_GT(tight.accepted, 0);
    }
  }
}

// Every block a verify step reserved for rows it rejected is given back at
// its settle: after each tick a sequence holds no block beyond what its
// tokens need (8 drafts reach into the next block often).
TEST(Speculation, RejectedRowsGiveTheirBlocksBack) {
  SchedFixture f(with_spec({}, 8, false));
  f.device->set_next_token([](std::span<const TokenId> ctx) { return next_token(ctx, 0); });
  f.device->keep_plans(true);
  const uint64_t id = f.submit(greedy_request(make_prompt(30, 7), 200));
  int verify_steps = 0;
  while (!f.sched->idle()) {
    f.sched->tick();
    const StepPlan& p = f.device->plans().back();
    if (p.outputs.size() > 1) ++verify_steps;
    const int32_t tokens = 30 + static_cast<int32_t>(f.req.at(id).tokens.size());
    if (!f.sched->idle()) {
      EXPECT_LE(f.kv->num_blocks_in_use(), (tokens + kKvBlockTokens - 1) / kKvBlockTokens);
    }
  }
  EXPECT_GT(verify_steps, 5);
  EXPECT_GT(f.tel.num_drafted, f.tel.num_accepted);
  EXPECT_TRUE(f.pool_is_full());
}

// Fails each device call of a clean run in turn: every request still gets
// exactly one terminal frame, and no block or state slot is left held.
void expect_every_failure_answered_once(const SchedFixtureOptions& o,
                                        const std::function<TokenId(std::span<const TokenId>)>& next) {
  int64_t calls = 0;
  {
    SchedFixture clean(o);
    clean.device->set_next_token(next);
    for (int i = 0; i < 3; ++i) clean.submit(greedy_request(make_prompt(20 + 5 * i, 9 + i), 40));
    clean.run();
    ASSERT_GT(clean.tel.num_accepted, 0);
    calls = clean.device->num_calls();
  }
  for (int64_t n = 0; n < calls; ++n) {
    ScopedFaultReset reset;
    SchedFixture f(o);
    f.device->set_next_token(next);
    f.device->fail_call(n);
    std::vector<uint64_t> ids;
    for (int i = 0; i < 3; ++i) ids.push_back(f.submit(greedy_request(make_prompt(20 + 5 * i, 9 + i), 40)));
    f.run();
    for (uint64_t id : ids) ASSERT_EQ(f.req.at(id).num_terminal(), 1) << "failing call " << n;
    EXPECT_TRUE(f.pool_is_full()) << "failing call " << n;
  }
}

TEST(Speculation, AFailureAtAnyDeviceCallAnswersEveryRequestOnce) {
  expect_every_failure_answered_once(with_spec({}, 4, true),
                                     [](std::span<const TokenId> ctx) { return next_token(ctx, 0); });
}

// The same with recurrent state kept after each verify row and chained MTP
// drafts: a failed verify step leaves no state slot held either.
TEST(Speculation, AFailureAtAnyDeviceCallOfARecurrentModelWithMtpAnswersEveryRequestOnce) {
  SchedFixtureOptions o = with_spec({}, 4, true);
  o.device.num_state_slots = o.sched.max_seqs;
  o.device.state_drafts = 4;
  o.device.policy = FedAheadPolicy::kRepickOnly;
  o.sched.spec.mtp = true;
  o.device.mtp = spec_testing::mtp_past_state;
  o.device.mtp_chain = 3;
  expect_every_failure_answered_once(o, [](std::span<const TokenId> ctx) {
    return next_token(ctx.first(ctx.size() - 2), 0);  // the state's two entries dropped
  });
}

TEST(Speculation, RecurrentSequencesGetNoDraftsWhenTheDeviceKeepsNoStatesForThem) {
  SchedFixtureOptions o = with_spec({}, 4, false);
  o.device.num_state_slots = o.sched.max_seqs;
  o.device.policy = FedAheadPolicy::kRepickOnly;
  SchedFixture f(o);
  f.device->set_next_token([](std::span<const TokenId> ctx) { return next_token(ctx, 0); });
  const uint64_t id = f.submit(greedy_request(make_prompt(30, 3), 60));
  f.run();
  EXPECT_EQ(f.req.at(id).finishes.size(), 1u);
  EXPECT_EQ(f.tel.num_drafted, 0);
  EXPECT_TRUE(f.pool_is_full());
}

struct RecurrentRun {
  std::vector<std::vector<TokenId>> tokens;
  int64_t drafted = 0;
  int64_t accepted = 0;
  int32_t most_drafts = 0;  // in any verify seq of any step
  bool all_checkpointed = true;
  int64_t state_mismatches = 0;
};

// Four greedy requests on a recurrent FakeDevice whose slots keep states
// for `state_drafts` drafts; its next token reads the tokens of the context
// (the state's two entries dropped: a stale state is counted as a mismatch).
RecurrentRun run_recurrent(int32_t max_draft, int32_t state_drafts, bool pipeline, int32_t kv_blocks) {
  SchedFixtureOptions o = with_spec({}, max_draft, pipeline);
  o.device.num_state_slots = o.sched.max_seqs;
  o.device.state_drafts = state_drafts;
  o.device.num_kv_blocks = kv_blocks;
  o.device.policy = FedAheadPolicy::kRepickOnly;
  SchedFixture f(o);
  f.device->keep_plans(true);
  f.device->set_next_token([](std::span<const TokenId> ctx) { return next_token(ctx.first(ctx.size() - 2), 0); });
  std::vector<uint64_t> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(f.submit(greedy_request(make_prompt(20 + 9 * i, 40 + i), 50 + i)));
  f.run();
  RecurrentRun r;
  for (uint64_t id : ids) {
    EXPECT_EQ(f.req.at(id).num_terminal(), 1);
    r.tokens.push_back(f.req.at(id).tokens);
  }
  EXPECT_TRUE(f.pool_is_full());
  for (const StepPlan& p : f.device->plans()) {
    for (const StepSeq& s : p.seqs) {
      const bool verify = s.num_rows > 1 && s.num_cached > 30;  // past every prompt: drafts
      if (verify) r.all_checkpointed = r.all_checkpointed && s.state_checkpoints;
      if (s.state_checkpoints) r.most_drafts = std::max(r.most_drafts, s.num_rows - 1);
    }
  }
  r.drafted = f.tel.num_drafted;
  r.accepted = f.tel.num_accepted;
  r.state_mismatches = f.device->num_state_mismatches();
  return r;
}

// With states kept after each verify row, sequences with recurrent state
// verify drafts (at most state_drafts a step), each step after a partly
// rejected verify runs from the state after the accepted prefix, and the
// output is the output without speculation: pipelined or not, in a roomy
// pool and in one that preempts.
TEST(Speculation, RecurrentSequencesVerifyUpToTheStatesTheDeviceKeepsWithTheSameOutput) {
  for (const bool pipeline : {false, true}) {
    for (const int32_t blocks : {64, 9}) {
      const RecurrentRun plain = run_recurrent(0, 3, pipeline, blocks);
      const RecurrentRun spec = run_recurrent(6, 3, pipeline, blocks);
      const std::string where = fmt::format("pipeline {} blocks {}", pipeline, blocks);
      EXPECT_EQ(spec.tokens, plain.tokens) << where;
      EXPECT_GT(spec.accepted, 0) << where;
      EXPECT_LT(spec.accepted, spec.drafted) << where;  // some rejected: the rewind is exercised
      EXPECT_EQ(spec.most_drafts, 3) << where;
      EXPECT_TRUE(spec.all_checkpointed) << where;
      EXPECT_EQ(spec.state_mismatches, 0) << where;
      EXPECT_EQ(plain.state_mismatches, 0) << where;
    }
  }
}

struct Predicted {
  std::vector<TokenId> tokens;
  Usage usage;
  int num_steps = 0;
};

// One greedy request (the fake device's default next-token hash: nothing
// repeats, so only a prediction drafts) with `prediction`, pipelined.
Predicted run_predicted(std::vector<TokenId> prediction, int32_t max_tokens = 80) {
  SchedFixture f(with_spec({}, 0, true));
  EngineRequest r = greedy_request(make_prompt(25, 11), max_tokens);
  r.prediction = std::move(prediction);
  const uint64_t id = f.submit(std::move(r));
  f.run();
  EXPECT_EQ(f.req.at(id).finishes.size(), 1u);
  EXPECT_TRUE(f.pool_is_full());
  Predicted p{f.req.at(id).tokens, {}, f.tel.num_steps};
  if (!f.req.at(id).finishes.empty()) p.usage = f.req.at(id).finishes[0].usage;
  return p;
}

TEST(Speculation, APredictionEqualToTheOutputIsAcceptedWhole) {
  const Predicted plain = run_predicted({});
  ASSERT_EQ(plain.tokens.size(), 80u);
  EXPECT_EQ(plain.usage.accepted_prediction_tokens, 0);
  const Predicted got = run_predicted(plain.tokens);
  EXPECT_EQ(got.tokens, plain.tokens);
  EXPECT_EQ(got.usage.accepted_prediction_tokens, 80);
  EXPECT_EQ(got.usage.rejected_prediction_tokens, 0);
  EXPECT_LE(got.num_steps, plain.num_steps / 4) << "16 drafts a step";
}

// The prediction has 6 tokens of the output replaced by 4 others at 30: the
// output is unchanged, the drafts at the edit are rejected, and after the
// model is past the edit the prediction is drafted again and accepted.
TEST(Speculation, APredictionWithAnEditIsPickedUpAgainAfterIt) {
  const Predicted plain = run_predicted({});
  std::vector<TokenId> edited(plain.tokens.begin(), plain.tokens.begin() + 30);
  edited.insert(edited.end(), {7, 8, 9, 10});
  edited.insert(edited.end(), plain.tokens.begin() + 36, plain.tokens.end());
  const Predicted got = run_predicted(edited);
  EXPECT_EQ(got.tokens, plain.tokens);
  EXPECT_GT(got.usage.rejected_prediction_tokens, 0);
  // The step's drafts at the edit, and the step trying a one-token
  // substitution past it.
  EXPECT_LE(got.usage.rejected_prediction_tokens, 2 * SpecOptions{}.prediction_draft);
  // 30 before the edit; after it, all but the few the matcher needs to pick it up again.
  EXPECT_GE(got.usage.accepted_prediction_tokens, 30 + (80 - 36) - 6);
  EXPECT_LT(got.num_steps, plain.num_steps / 2);
}

// A prediction that is wrong from the start changes nothing but the rows.
TEST(Speculation, AWrongPredictionLeavesTheOutputAlone) {
  const Predicted plain = run_predicted({});
  std::vector<TokenId> wrong(60);
  for (size_t i = 0; i < wrong.size(); ++i) wrong[i] = static_cast<TokenId>(300 + i % 50);
  const Predicted got = run_predicted(wrong);
  EXPECT_EQ(got.tokens, plain.tokens);
  EXPECT_EQ(got.usage.accepted_prediction_tokens, 0);
}

TEST(Speculation, OptionsOutOfRangeAreRefused) {
  auto with = [](int32_t max_draft, int32_t min_ngram, int32_t max_ngram, int32_t prediction_draft) {
    SpecOptions o;
    o.max_draft = max_draft;
    o.min_ngram = min_ngram;
    o.max_ngram = max_ngram;
    o.prediction_draft = prediction_draft;
    return o;
  };
  for (const SpecOptions bad : {with(-1, 2, 4, 8), with(kMaxDraftTokens + 1, 2, 4, 8), with(4, 0, 4, 8),
                                with(4, 5, 4, 8), with(4, 2, 4, 0), with(4, 2, 4, kMaxDraftTokens + 1)}) {
    testing::FakeDevice device({});
    DevPort dev(device);
    KvManager kv(device);
    testing::RecordingReq req;
    testing::CountingTel tel;
    FakeClock clock;
    SchedulerOptions o;
    o.spec = bad;
    auto s = Scheduler::create(SchedIo{dev, kv, req, tel, clock}, nullptr, testing::test_tokenizer(), o);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.status().message().find("must be"), std::string::npos) << s.status().message();
  }
}

}  // namespace
}  // namespace met
