// Tests for scheduler/decode_lane.h and pipeline.h: each validate rule of the
// reference, the lane through the scheduler on a FakeDevice, and faults while
// a step is ahead.
#include "scheduler/decode_lane.h"

#include <gtest/gtest.h>

#include "core/fault_flag.h"
#include "scheduler_fixture.h"

namespace met {
namespace {

using testing::greedy_request;
using testing::make_prompt;

class Validate : public ::testing::Test {
 protected:
  explicit Validate(FedAheadPolicy policy = FedAheadPolicy::kRewindable)
      : device_(options(policy)), dev_(device_), kv_(device_), lane_(SchedIo{dev_, kv_, req_, tel_, clock_}, 0, 0) {
    for (int i = 0; i < 2; ++i) {
      ActiveSeq a;
      a.seq.id = SeqId(static_cast<uint64_t>(i + 1));
      a.seq.tokens = {1, 20, 21, static_cast<TokenId>(100 + i)};  // 100+i: committed by step t
      a.seq.seq_len = 3;
      a.seq.slot_idx = i;
      a.out.prompt_len = 3;
      a.out.tokens = {static_cast<TokenId>(100 + i)};
      a.limits.remaining = 10;
      a.limits.eos_tokens = {2};
      a.sink = ResponseSink(RequestId(static_cast<uint64_t>(i + 1)), nullptr);
      active_.push_back(std::move(a));
    }
    prev_tokens_ = {100, 101};
  }
  ~Validate() override {
    for (ActiveSeq& a : active_) a.sink.error("done");
  }

  static testing::FakeDeviceOptions options(FedAheadPolicy policy) {
    testing::FakeDeviceOptions o;
    o.policy = policy;
    return o;
  }

  // Step t+1 as launched: each row fed from row i of step t at position 3.
  Inflight next() const {
    Inflight n;
    for (int i = 0; i < 2; ++i) {
      n.rows.push_back(LaneRow{i, 3});
      n.masks.push_back(RowMask{});
    }
    n.inputs = std::vector<RowInput>{FeedFromRow{0}, FeedFromRow{1}};
    n.discard.assign(2, false);
    n.has_logits = device_.info().fed_ahead_policy == FedAheadPolicy::kRepickOnly;
    return n;
  }

  testing::FakeDevice device_;
  DevPort dev_;
  KvManager kv_;
  testing::RecordingReq req_;
  testing::CountingTel tel_;
  FakeClock clock_;
  DecodeLane lane_;
  std::vector<ActiveSeq> active_;
  std::vector<TokenId> prev_tokens_;
};

class ValidateRepickOnly : public Validate {
 protected:
  ValidateRepickOnly() : Validate(FedAheadPolicy::kRepickOnly) {}
};

TEST_F(Validate, RowsThatStillMatchAreKept) {
  auto [n, poisoned] = lane_.validate_next(next(), active_, prev_tokens_);
  EXPECT_FALSE(poisoned);
  EXPECT_EQ(n.discard, (std::vector<bool>{false, false}));
  EXPECT_FALSE(n.discard_all);
  EXPECT_FALSE(n.host_logits);
}

TEST_F(Validate, AFinishedRowIsAnOverRun) {
  active_[0].status.finished = true;
  auto [n, poisoned] = lane_.validate_next(next(), active_, prev_tokens_);
  EXPECT_EQ(n.discard, (std::vector<bool>{true, false}));
  EXPECT_FALSE(poisoned);
}

TEST_F(Validate, ARowFedAnotherTokenThanTheOneCommittedIsAnOverRun) {
  prev_tokens_[1] = 555;  // the device fed 555; the host committed 101
  auto [n, poisoned] = lane_.validate_next(next(), active_, prev_tokens_);
  EXPECT_EQ(n.discard, (std::vector<bool>{false, true}));
  EXPECT_FALSE(poisoned);
}

TEST_F(Validate, ARowWhoseLengthMovedIsAnOverRun) {
  active_[0].seq.seq_len = 2;  // its step-t row was discarded: it did not advance
  auto [n, poisoned] = lane_.validate_next(next(), active_, prev_tokens_);
  EXPECT_EQ(n.discard, (std::vector<bool>{true, false}));
}

TEST_F(Validate, AStaleMaskOnASurvivorRedoesTheWholeStep) {
  Inflight launched = next();
  launched.masks[1] = RowMask{true};  // launched with EOS banned; banned no more
  auto [n, poisoned] = lane_.validate_next(std::move(launched), active_, prev_tokens_);
  EXPECT_TRUE(n.discard_all);
  EXPECT_FALSE(n.host_logits);
}

TEST_F(Validate, AStaleMaskOnAnOverRunIsIgnored) {
  active_[1].status.finished = true;
  Inflight launched = next();
  launched.masks[1] = RowMask{true};
  auto [n, poisoned] = lane_.validate_next(std::move(launched), active_, prev_tokens_);
  EXPECT_FALSE(n.discard_all);
}

TEST_F(Validate, ARowThatNeedsHostSamplingAsksForLogitsAndRedoesWithoutThem) {
  SamplingParams sampled;
  sampled.temperature = 0.7f;
  active_[0].sampler = Sampler(sampled);
  auto [n, poisoned] = lane_.validate_next(next(), active_, prev_tokens_);
  EXPECT_TRUE(n.host_logits);
  EXPECT_TRUE(n.discard_all);  // an argmax-only step has no logits to sample from
}

TEST_F(ValidateRepickOnly, AStaleMaskKeepsTheForwardAndTheHostPicksAgain) {
  Inflight launched = next();
  launched.masks[0] = RowMask{true};
  auto [n, poisoned] = lane_.validate_next(std::move(launched), active_, prev_tokens_);
  EXPECT_FALSE(n.discard_all);
  EXPECT_TRUE(n.host_logits);
  EXPECT_FALSE(poisoned);
}

TEST_F(ValidateRepickOnly, AContinuingRowFedAnUncommittedInputPoisonsTheStep) {
  prev_tokens_[0] = 555;
  auto [n, poisoned] = lane_.validate_next(next(), active_, prev_tokens_);
  EXPECT_TRUE(poisoned);
}

TEST_F(ValidateRepickOnly, AFinishedRowsOverRunIsHarmless) {
  active_[0].status.finished = true;
  prev_tokens_[0] = 555;
  auto [n, poisoned] = lane_.validate_next(next(), active_, prev_tokens_);
  EXPECT_FALSE(poisoned);
  EXPECT_TRUE(n.discard[0]);
}

// Through the scheduler.

int count_fed_ahead(const testing::FakeDevice& d) {
  int n = 0;
  for (const StepPlan& p : d.plans()) {
    if (!p.inputs.empty() && std::holds_alternative<FeedFromRow>(p.inputs[0])) ++n;
  }
  return n;
}

TEST(DecodeLane, LaunchesAheadInSteadyDecodeAndGivesTheSynchronousTokens) {
  std::vector<std::vector<TokenId>> out[2];
  int ahead[2] = {0, 0};
  for (int on = 0; on < 2; ++on) {
    testing::SchedFixtureOptions o;
    o.sched.pipeline = on == 1;
    testing::SchedFixture f(o);
    f.device->keep_plans(true);
    std::vector<uint64_t> ids;
    for (int i = 0; i < 4; ++i) ids.push_back(f.submit(greedy_request(make_prompt(10 + i, 50 + i), 20 + i)));
    f.run();
    for (uint64_t id : ids) {
      EXPECT_EQ(f.req.at(id).finishes.size(), 1u);
      out[on].push_back(f.req.at(id).tokens);
    }
    ahead[on] = count_fed_ahead(*f.device);
    EXPECT_TRUE(f.pool_is_full());
  }
  EXPECT_EQ(out[0], out[1]);
  EXPECT_EQ(ahead[0], 0);
  EXPECT_GT(ahead[1], 10);
}

TEST(DecodeLane, AReserveFailureMeansNoLaunchAhead) {
  // One sequence that fills its pool exactly: the block for the step ahead
  // cannot be reserved at the block boundary, so that step is not launched.
  testing::SchedFixtureOptions o;
  o.device.num_kv_blocks = 2;
  testing::SchedFixture f(o);
  f.device->keep_plans(true);
  const uint64_t id = f.submit(greedy_request(make_prompt(10, 7), 22));  // positions up to 31
  f.run();
  EXPECT_EQ(f.req.at(id).finishes.at(0).finish_reason, "length");
  for (const StepPlan& p : f.device->plans()) {
    for (size_t r = 0; r < p.positions.size(); ++r) EXPECT_LT(p.positions[r], 32);
  }
  EXPECT_TRUE(f.pool_is_full());
}

TEST(DecodeLane, AForwardThatFailsWhileAStepIsAheadAnswersEveryRequestOnce) {
  for (int64_t fail_at = 4; fail_at < 14; ++fail_at) {
    ScopedFaultReset reset;
    testing::SchedFixture f;
    f.device->keep_plans(true);
    std::vector<uint64_t> ids;
    for (int i = 0; i < 3; ++i) ids.push_back(f.submit(greedy_request(make_prompt(10, 60 + i), 30)));
    f.device->fail_call(fail_at);
    f.run();
    for (uint64_t id : ids) EXPECT_EQ(f.req.at(id).num_terminal(), 1) << fail_at;
    EXPECT_TRUE(f.pool_is_full()) << fail_at;
    EXPECT_GT(count_fed_ahead(*f.device), 0) << fail_at;
  }
}

TEST(DecodeLane, AStaleMaskRedoesTheStepAndKeepsTheTokens) {
  // min_tokens flips the row's mask one token after a launch ahead; the redo
  // gives the tokens of the lane switched off.
  const TokenId eos = *testing::test_tokenizer().vocab().special().eos;
  std::vector<TokenId> out[2];
  for (int on = 0; on < 2; ++on) {
    testing::SchedFixtureOptions o;
    o.sched.pipeline = on == 1;
    testing::SchedFixture f(o);
    f.device->set_next_token([&](std::span<const TokenId> ctx) { return ctx.size() % 3 == 0 ? eos : TokenId{300}; });
    EngineRequest r = greedy_request(make_prompt(10, 8), 40);
    r.min_tokens = 6;
    const uint64_t id = f.submit(std::move(r));
    f.run();
    out[on] = f.req.at(id).tokens;
    EXPECT_EQ(f.req.at(id).finishes.at(0).finish_reason, "stop");
    EXPECT_TRUE(f.pool_is_full());
  }
  EXPECT_EQ(out[0], out[1]);
  EXPECT_GE(out[1].size(), 7u);
}

TEST(DecodeLane, ARepickOnlyModelWithAStaleMaskKeepsTheForwardAndPicksFromItsLogits) {
  // min_tokens = 3 flips the row's mask after the third token; the step
  // launched ahead with the old mask stands, and the host picks its token from
  // the step's logits. Step 3's argmax readback says 301 while its logits say
  // 300: the token committed is the host's pick from the logits.
  testing::SchedFixtureOptions o;
  o.device.policy = FedAheadPolicy::kRepickOnly;
  testing::SchedFixture f(o);
  f.device->keep_plans(true);
  f.device->set_next_token([&](std::span<const TokenId>) { return TokenId{300}; });
  EngineRequest r = greedy_request(make_prompt(10, 9), 8);
  r.min_tokens = 3;
  const uint64_t id = f.submit(std::move(r));
  f.device->override_argmax(3, 0, 301);
  f.run();
  const auto& rec = f.req.at(id);
  ASSERT_EQ(rec.finishes.size(), 1u);
  EXPECT_EQ(rec.tokens, std::vector<TokenId>(8, 300));
  EXPECT_GT(count_fed_ahead(*f.device), 0);
  EXPECT_TRUE(f.pool_is_full());
}

}  // namespace
}  // namespace met
