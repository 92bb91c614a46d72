// Tests for MTP drafting in the scheduler (speculation.h: note_mtp_draft,
// mtp_chain_for) on a FakeDevice that plays the model's MTP block: its
// drafts are verified and keep the output, pipelined or not, in a roomy
// pool and in one that recomputes; chained drafts (DeviceInfo::mtp_drafts
// > 1) verify several tokens a step, grow with acceptance, stop at the
// device's chain and the request's cap, and keep the output too, also for
// sequences with recurrent state; a scheduler asked to draft by MTP needs a
// device that runs the block.
#include "scheduler/speculation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "scheduler_fixture.h"
#include "speculation_support.h"

namespace met {
namespace {

using spec_testing::next_token;
using spec_testing::run_six;
using spec_testing::SpecRun;
using spec_testing::with_spec;
using testing::greedy_request;
using testing::make_prompt;
using testing::SchedFixture;
using testing::SchedFixtureOptions;

// The model's MTP block drafts one token a step: a perfect one (the
// device's own next token past the row's argmax) is nearly always accepted,
// a wrong one never; either way the output is the output without it,
// pipelined or not, in a roomy pool and in one that recomputes.
TEST(SpeculationMtp, DraftsAreVerifiedAndKeepTheOutput) {
  for (const bool pipeline : {false, true}) {
    for (const int32_t blocks : {64, 12}) {
      SchedFixtureOptions o = with_spec({}, 0, pipeline);
      o.device.num_kv_blocks = blocks;
      const SpecRun plain = run_six(o, 45);
      o.sched.spec.mtp = true;
      o.device.mtp = [](std::span<const TokenId> ctx) { return next_token(ctx, 0); };
      const SpecRun right = run_six(o, 45);
      o.device.mtp = [](std::span<const TokenId>) { return TokenId{70}; };  // never the next token
      const SpecRun wrong = run_six(o, 45);
      const std::string where = fmt::format("pipeline {} blocks {}", pipeline, blocks);
      EXPECT_EQ(right.tokens, plain.tokens) << where;
      EXPECT_EQ(wrong.tokens, plain.tokens) << where;
      EXPECT_GT(right.accepted, right.drafted * 9 / 10) << where;
      EXPECT_LT(right.num_steps, plain.num_steps * 3 / 4) << where;
      EXPECT_EQ(wrong.accepted, 0) << where;
    }
  }
}

TEST(SpeculationMtp, DraftingNeedsADeviceThatRunsTheBlock) {
  testing::FakeDevice device({});
  DevPort port(device);
  KvManager kv(device);
  testing::RecordingReq req;
  testing::CountingTel tel;
  FakeClock clock;
  SchedulerOptions o;
  o.spec.mtp = true;
  const auto s = Scheduler::create(SchedIo{port, kv, req, tel, clock}, nullptr, testing::test_tokenizer(), o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("MTP"), std::string::npos) << s.status().message();
}

// An MTP block that guesses right except where the context's length is a
// multiple of 7 (a chain breaks there, and the verify step rejects the rest).
TokenId flaky_mtp(std::span<const TokenId> ctx) { return ctx.size() % 7 == 0 ? TokenId{70} : next_token(ctx, 0); }

// The drafts `s` verifies: a seq with an output at every row (no prompt
// logprobs here) and more than one row; 0 otherwise.
int32_t verified_drafts(const StepPlan& p, const StepSeq& s) {
  const auto outputs = std::count_if(p.outputs.begin(), p.outputs.end(), [&](const OutputRow& o) {
    return o.row >= s.row_begin && o.row < s.row_begin + s.num_rows;
  });
  return outputs == s.num_rows ? s.num_rows - 1 : 0;
}

struct ChainRun {
  SpecRun run;
  int32_t most_drafts = 0;  // in any verify seq of any step
  int32_t most_chain = 0;   // StepSeq::mtp_chain of any seq
};

ChainRun run_chained(SchedFixtureOptions o, int32_t max_tokens) {
  SchedFixture f(o);
  f.device->keep_plans(true);
  f.device->set_next_token([](std::span<const TokenId> ctx) { return next_token(ctx, 0); });
  std::vector<uint64_t> ids;
  for (int i = 0; i < 4; ++i) {
    ids.push_back(f.submit(greedy_request(make_prompt(20 + 7 * i, 100 + static_cast<uint32_t>(i)), max_tokens + i)));
  }
  f.run();
  ChainRun r;
  for (uint64_t id : ids) {
    EXPECT_EQ(f.req.at(id).num_terminal(), 1);
    r.run.tokens.push_back(f.req.at(id).tokens);
  }
  EXPECT_TRUE(f.pool_is_full());
  for (const StepPlan& p : f.device->plans()) {
    for (const StepSeq& s : p.seqs) {
      r.most_drafts = std::max(r.most_drafts, verified_drafts(p, s));
      r.most_chain = std::max(r.most_chain, s.mtp_chain);
    }
  }
  r.run.num_steps = f.tel.num_steps;
  r.run.drafted = f.tel.num_drafted;
  r.run.accepted = f.tel.num_accepted;
  return r;
}

// A device that chains three more guesses past each output's own: good
// drafts are verified four a step (fewer steps than one draft a step),
// flaky ones are cut where the chain breaks; the output is the output
// without drafts either way, pipelined or not, roomy pool or recomputing.
TEST(SpeculationMtp, ChainedDraftsVerifySeveralTokensAStepAndKeepTheOutput) {
  for (const bool pipeline : {false, true}) {
    for (const int32_t blocks : {64, 12}) {
      SchedFixtureOptions o = with_spec({}, 0, pipeline);
      o.device.num_kv_blocks = blocks;
      const ChainRun plain = run_chained(o, 45);
      o.sched.spec.mtp = true;
      o.device.mtp = [](std::span<const TokenId> ctx) { return next_token(ctx, 0); };
      const ChainRun one = run_chained(o, 45);
      o.device.mtp_chain = 3;
      const ChainRun chained = run_chained(o, 45);
      o.device.mtp = flaky_mtp;
      const ChainRun flaky = run_chained(o, 45);
      const std::string where = fmt::format("pipeline {} blocks {}", pipeline, blocks);
      EXPECT_EQ(one.run.tokens, plain.run.tokens) << where;
      EXPECT_EQ(chained.run.tokens, plain.run.tokens) << where;
      EXPECT_EQ(flaky.run.tokens, plain.run.tokens) << where;
      EXPECT_EQ(one.most_drafts, 1) << where;
      EXPECT_EQ(chained.most_drafts, 4) << where;
      EXPECT_EQ(chained.most_chain, 3) << where;
      EXPECT_GT(chained.run.accepted, chained.run.drafted * 9 / 10) << where;
      EXPECT_LT(chained.run.num_steps, one.run.num_steps * 3 / 4) << where;
      EXPECT_LT(flaky.run.accepted, flaky.run.drafted) << where;
      EXPECT_GT(flaky.run.accepted, 0) << where;
    }
  }
}

// A request's draft cap (max_draft_tokens) bounds the chain it asks for.
TEST(SpeculationMtp, TheRequestsDraftCapBoundsTheChain) {
  SchedFixtureOptions o = with_spec({}, 0, false);
  o.sched.spec.mtp = true;
  o.device.mtp = [](std::span<const TokenId> ctx) { return next_token(ctx, 0); };
  o.device.mtp_chain = 5;
  SchedFixture f(o);
  f.device->keep_plans(true);
  f.device->set_next_token([](std::span<const TokenId> ctx) { return next_token(ctx, 0); });
  EngineRequest r = greedy_request(make_prompt(20, 5), 40);
  r.max_draft_tokens = 2;
  const uint64_t id = f.submit(std::move(r));
  f.run();
  EXPECT_EQ(f.req.at(id).num_terminal(), 1);
  int32_t most_chain = 0, most_rows = 0;  // rows of a verify seq
  for (const StepPlan& p : f.device->plans()) {
    for (const StepSeq& s : p.seqs) {
      most_chain = std::max(most_chain, s.mtp_chain);
      most_rows = std::max(most_rows, verified_drafts(p, s) + 1);
    }
  }
  EXPECT_EQ(most_chain, 1);
  EXPECT_EQ(most_rows, 3);
}

// Sequences with recurrent state verify chained drafts up to the states the
// device keeps, rewound exactly where a chain breaks.
TEST(SpeculationMtp, ChainedDraftsOnARecurrentModelKeepTheOutput) {
  SchedFixtureOptions o = with_spec({}, 0, true);
  o.device.num_state_slots = o.sched.max_seqs;
  o.device.state_drafts = 4;
  o.device.policy = FedAheadPolicy::kRepickOnly;
  const auto next = [](std::span<const TokenId> ctx) { return next_token(ctx.first(ctx.size() - 2), 0); };
  const auto run = [&](const SchedFixtureOptions& opts) {
    SchedFixture f(opts);
    f.device->set_next_token(next);
    std::vector<uint64_t> ids;
    for (int i = 0; i < 3; ++i) ids.push_back(f.submit(greedy_request(make_prompt(20 + 9 * i, 40 + i), 50)));
    f.run();
    std::vector<std::vector<TokenId>> tokens;
    for (uint64_t id : ids) tokens.push_back(f.req.at(id).tokens);
    EXPECT_TRUE(f.pool_is_full());
    EXPECT_EQ(f.device->num_state_mismatches(), 0);
    return std::pair(tokens, f.tel.num_accepted);
  };
  const auto plain = run(o);
  o.sched.spec.mtp = true;
  o.device.mtp = spec_testing::mtp_past_state;
  o.device.mtp_chain = 3;
  const auto chained = run(o);
  EXPECT_EQ(chained.first, plain.first);
  EXPECT_GT(chained.second, 100);
}

}  // namespace
}  // namespace met
