// Tests for the draft budget in the scheduler (DraftPlanner over
// spec/draft_budget.h), on a FakeDevice that reports each step's device
// time as a function of its rows: a batch of 16 on a compute-bound device
// verifies few of its drafts, a single stream on a memory-bound one nearly
// all, a stream whose drafts are mostly wrong fewer than it proposes; the
// output is the output without speculation in every case, and what the
// budget holds back is counted. Where MTP drafts would not be verified, the
// steps skip the block's guesses (StepPlan::mtp_guesses), pipelined or not,
// and a request whose first MTP drafts were rejected on a device where any
// draft costs half a step drafts again within a few steps.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "scheduler/speculation.h"
#include "scheduler_fixture.h"

namespace met {
namespace {

using testing::greedy_request;
using testing::make_prompt;
using testing::SchedFixture;
using testing::SchedFixtureOptions;

// A 6-token cycle: prompt lookup drafts it and is right.
TokenId six_cycle(std::span<const TokenId> ctx) { return testing::cycle_next(ctx, 70, 6); }

// Three tokens in a pseudo-random order: every 2-gram comes back, followed
// by the same token only about a third of the time.
TokenId three_shuffle(std::span<const TokenId> ctx) {
  uint32_t h = static_cast<uint32_t>(ctx.size()) * 2654435761u;
  h ^= h >> 13;
  return static_cast<TokenId>(80 + (h * 0x9E3779B1u >> 7) % 3);
}

struct BudgetRun {
  std::vector<std::vector<TokenId>> tokens;
  int num_steps = 0;
  int64_t drafted = 0;
  int64_t accepted = 0;
  int64_t withheld = 0;
};

// `n` greedy requests of 100 tokens; lookup drafts 4 a step when `lookup`.
BudgetRun run_budget(int n, bool lookup, bool adaptive, std::function<int64_t(int32_t)> step_ns,
                     testing::FakeDevice::NextToken next) {
  SchedFixtureOptions o = testing::with_prompt_lookup({}, lookup ? 4 : 0, 2, 3, false);
  o.device.step_ns = std::move(step_ns);
  o.sched.spec.adaptive = adaptive;
  SchedFixture f(o);
  f.device->set_next_token(std::move(next));
  std::vector<uint64_t> ids;
  for (int i = 0; i < n; ++i) {
    ids.push_back(f.submit(greedy_request(make_prompt(24, 300 + static_cast<uint32_t>(i)), 100)));
  }
  f.run();
  BudgetRun r;
  for (uint64_t id : ids) {
    EXPECT_EQ(f.req.at(id).num_terminal(), 1);
    r.tokens.push_back(f.req.at(id).tokens);
  }
  EXPECT_TRUE(f.pool_is_full());
  r.num_steps = f.tel.num_steps;
  r.drafted = f.tel.num_drafted;
  r.accepted = f.tel.num_accepted;
  r.withheld = f.tel.num_withheld;
  return r;
}

// The same requests without speculation, verifying every proposal, and
// within the draft budget.
struct ThreeRuns {
  BudgetRun off, all, budget;
};
ThreeRuns run_three(int n, const std::function<int64_t(int32_t)>& step_ns,
                    const testing::FakeDevice::NextToken& next) {
  return {run_budget(n, false, true, step_ns, next), run_budget(n, true, false, step_ns, next),
          run_budget(n, true, true, step_ns, next)};
}

int64_t compute_bound(int32_t rows) { return int64_t{1000000} * rows; }         // 1 ms a row, nothing else
int64_t memory_bound(int32_t rows) { return 10000000 + int64_t{50000} * rows; }  // 10 ms a step, 0.05 ms a row
int64_t in_between(int32_t rows) { return 10000000 + int64_t{1000000} * rows; }  // a row is a tenth of a step

TEST(SpeculationBudget, AComputeBoundBatchVerifiesFewOfItsDrafts) {
  const auto [off, all, budget] = run_three(16, compute_bound, six_cycle);
  EXPECT_EQ(all.tokens, off.tokens);
  EXPECT_EQ(budget.tokens, off.tokens);
  EXPECT_EQ(all.withheld, 0);
  EXPECT_GT(budget.withheld, 0);
  EXPECT_LT(budget.drafted * 4, all.drafted) << "the batch's rows already fill the step";
}

TEST(SpeculationBudget, AMemoryBoundSingleStreamVerifiesNearlyAllItsDrafts) {
  const auto [off, all, budget] = run_three(1, memory_bound, six_cycle);
  EXPECT_EQ(budget.tokens, off.tokens);
  // Until the model has measured steps of two sizes every other step runs
  // without drafts (a few steps); after that every proposal stands.
  EXPECT_LE(budget.withheld, 3 * 4);
  EXPECT_GE(budget.drafted + 3 * 4, all.drafted);
  EXPECT_LE(budget.num_steps, all.num_steps + 3);
  EXPECT_LT(budget.num_steps * 3, off.num_steps * 2) << "drafts save steps";
}

TEST(SpeculationBudget, MostlyWrongDraftsAreCutToTheFewThatPay) {
  const auto [off, all, budget] = run_three(1, in_between, three_shuffle);
  EXPECT_EQ(budget.tokens, off.tokens);
  EXPECT_EQ(all.tokens, off.tokens);
  ASSERT_GT(all.drafted, 100);
  EXPECT_LT(all.accepted * 2, all.drafted) << "lookup is mostly wrong here";
  EXPECT_GT(budget.withheld, 0);
  EXPECT_LT(budget.drafted * 3, all.drafted * 2);
  EXPECT_GT(budget.drafted, 0) << "a first draft at 1/3 still pays when a row costs 1/11 of a step";
}

// Steps of `n` greedy MTP-drafted requests of 100 tokens (the block guesses
// right), and how many of them computed no guesses.
struct MtpRun {
  std::vector<std::vector<TokenId>> tokens;
  int num_steps = 0, without_guesses = 0;
  int64_t drafted = 0;
};
MtpRun run_mtp(int n, bool mtp, std::function<int64_t(int32_t)> step_ns, bool pipeline = false) {
  SchedFixtureOptions o = testing::with_prompt_lookup({}, 0, 2, 3, pipeline);
  o.device.step_ns = std::move(step_ns);
  o.sched.spec.mtp = mtp;
  o.device.mtp = mtp ? testing::FakeDevice::NextToken(six_cycle) : nullptr;
  SchedFixture f(o);
  f.device->set_next_token(six_cycle);
  f.device->keep_plans(true);
  std::vector<uint64_t> ids;
  for (int i = 0; i < n; ++i) {
    ids.push_back(f.submit(greedy_request(make_prompt(24, 300 + static_cast<uint32_t>(i)), 100)));
  }
  f.run();
  MtpRun r;
  for (uint64_t id : ids) r.tokens.push_back(f.req.at(id).tokens);
  EXPECT_TRUE(f.pool_is_full());
  r.num_steps = f.tel.num_steps;
  r.drafted = f.tel.num_drafted;
  for (const StepPlan& p : f.device->plans()) r.without_guesses += p.mtp_guesses ? 0 : 1;
  return r;
}

// A batch of 16 on a compute-bound device: the budget would verify no MTP
// draft, so the steps do not compute the block's guesses (its head over
// every output) but now and then, to measure again, pipelined or not; a
// memory-bound single stream computes them every step and verifies them.
// Same output.
TEST(SpeculationBudget, StepsSkipTheMtpGuessesTheBudgetWouldNotVerify) {
  const MtpRun off = run_mtp(16, false, compute_bound);
  const MtpRun batch = run_mtp(16, true, compute_bound);
  EXPECT_EQ(batch.tokens, off.tokens);
  EXPECT_GT(batch.without_guesses * 10, batch.num_steps * 7) << batch.without_guesses << " of " << batch.num_steps;
  const MtpRun one_off = run_mtp(1, false, memory_bound);
  const MtpRun one = run_mtp(1, true, memory_bound);
  EXPECT_EQ(one.tokens, one_off.tokens);
  EXPECT_LT(one.without_guesses * 10, one.num_steps) << one.without_guesses << " of " << one.num_steps;
  EXPECT_LT(one.num_steps * 3, one_off.num_steps * 2) << "its drafts save steps";
  // Pipelined, the exploring steps verify the guesses of the step in flight
  // (the lane settles first) as many as one step at a time does.
  const MtpRun piped = run_mtp(16, true, compute_bound, true);
  EXPECT_EQ(piped.tokens, off.tokens);
  EXPECT_GE(piped.drafted, batch.drafted);
  EXPECT_GT(piped.without_guesses * 10, piped.num_steps * 7) << piped.without_guesses << " of " << piped.num_steps;
}

// A step with drafts costs half a step more than one without (the block's
// guesses, its head over the vocab and its chain), as on the medium qwen35
// at batch 1 (13.3 ms without, 18.7 with a draft, 21.5 with three).
int64_t guesses_cost_half_a_step(int32_t rows) { return rows == 1 ? 12000000 : 17000000 + int64_t{750000} * rows; }

constexpr TokenId kSecondRequest = 500;  // the second request's first prompt token

// Two single-stream requests of 100 tokens, one after the other, with 3
// MTP drafts a step; the block's guesses are right but for the second
// request's first `misses`. The steps of the second, and how many computed
// no guesses.
MtpRun run_second_request(bool mtp, bool pipeline, int misses) {
  SchedFixtureOptions o = testing::with_prompt_lookup({}, 0, 2, 3, pipeline);
  o.device.step_ns = guesses_cost_half_a_step;
  o.sched.spec.mtp = mtp;
  if (mtp) {
    o.device.mtp = [misses](std::span<const TokenId> ctx) {
      const bool miss = ctx[0] == kSecondRequest && ctx.size() <= static_cast<size_t>(24 + misses);
      return miss ? TokenId{5} : six_cycle(ctx);
    };
  }
  o.device.mtp_chain = 2;
  SchedFixture f(o);
  f.device->set_next_token(six_cycle);
  f.device->keep_plans(true);
  f.submit(greedy_request(make_prompt(24, 300), 100));
  f.run();
  const int steps_before = f.tel.num_steps;
  const size_t plans_before = f.device->plans().size();
  std::vector<TokenId> prompt = make_prompt(24, 301);
  prompt[0] = kSecondRequest;
  const uint64_t id = f.submit(greedy_request(prompt, 100));
  f.run();
  MtpRun r;
  r.tokens.push_back(f.req.at(id).tokens);
  EXPECT_TRUE(f.pool_is_full());
  r.num_steps = f.tel.num_steps - steps_before;
  for (size_t i = plans_before; i < f.device->plans().size(); ++i) {
    r.without_guesses += f.device->plans()[i].mtp_guesses ? 0 : 1;
  }
  return r;
}

// A request whose first MTP drafts were all rejected, on a device whose
// steps with any draft cost half a step more, drafts again soon, pipelined
// or not: after one such step (its acceptance rate falls from the even
// chance to a third) at once, as three drafts at a third and more pay
// together where the first alone would not, and the steps that compute no
// guesses ask for as many as the budget would verify; after several (a
// fifth), within half an exploring period (kExploreSteps), as a rate that
// fell drifts back while the steps compute no guesses, and a pipelined
// lane settles to verify the guesses of the step in flight. Before, the
// request ran 30 to 100 steps without drafts: a rate stayed where it fell
// while no guess was computed, the steps computed one guess where only
// three paid, and a pipelined lane never verified its exploring guesses.
TEST(SpeculationBudget, ARequestWhoseFirstDraftsMissedDraftsAgainSoon) {
  for (const bool pipeline : {false, true}) {
    const MtpRun off = run_second_request(false, pipeline, 0);
    const MtpRun once = run_second_request(true, pipeline, 1);
    const MtpRun thrice = run_second_request(true, pipeline, 3);
    const std::string where = fmt::format("pipeline {}", pipeline);
    EXPECT_EQ(once.tokens, off.tokens) << where;
    EXPECT_EQ(thrice.tokens, off.tokens) << where;
    EXPECT_LT(once.without_guesses, 4) << once.without_guesses << " of " << once.num_steps << ", " << where;
    EXPECT_LT(once.num_steps * 3, off.num_steps) << where;
    EXPECT_LT(thrice.without_guesses, static_cast<int>(kExploreSteps / 2))
        << thrice.without_guesses << " of " << thrice.num_steps << ", " << where;
    EXPECT_LT(thrice.num_steps * 2, off.num_steps) << where;
  }
}

}  // namespace
}  // namespace met
