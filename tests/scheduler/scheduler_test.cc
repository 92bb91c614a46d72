// Tests for scheduler/scheduler.h with a FakeDevice and a FakeClock.
#include "scheduler/scheduler.h"

#include <gtest/gtest.h>

#include <cmath>

#include <algorithm>
#include <chrono>
#include <fstream>

#include "core/fault_flag.h"
#include "scheduler/finish_reason.h"
#include "scheduler_fixture.h"

namespace met {
namespace {

using testing::greedy_request;
using testing::make_prompt;
using testing::run_many;
using testing::SchedFixture;
using testing::SchedFixtureOptions;

// What an uninterrupted run gives: the device's next token over the context,
// repeatedly.
std::vector<TokenId> expected_tokens(const testing::FakeDevice& dev, std::vector<TokenId> context, int n) {
  std::vector<TokenId> out;
  for (int i = 0; i < n; ++i) {
    const TokenId t = dev.default_next(context);
    out.push_back(t);
    context.push_back(t);
  }
  return out;
}

TEST(Scheduler, ADeviceWhoseKvBlocksHoldAnotherNumberOfTokensIsRefused) {
  testing::FakeDeviceOptions o;
  o.kv_block_tokens = 2 * kKvBlockTokens;
  testing::FakeDevice device(o);
  DevPort dev(device);
  KvManager kv(device);
  testing::RecordingReq req;
  NullTelPort tel;
  FakeClock clock;
  const Result<std::unique_ptr<Scheduler>> s =
      Scheduler::create(SchedIo{dev, kv, req, tel, clock}, nullptr, testing::test_tokenizer(), SchedulerOptions{});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("32 tokens"), std::string::npos) << s.status().message();
}

TEST(Scheduler, GreedyOutputIsTheDevicesNextTokenEachStep) {
  SchedFixture f;
  const std::vector<TokenId> prompt = make_prompt(20, 1);
  const uint64_t id = f.submit(greedy_request(prompt, 12));
  f.run();
  const auto& r = f.req.at(id);
  ASSERT_EQ(r.num_terminal(), 1);
  ASSERT_EQ(r.finishes.size(), 1u);
  EXPECT_EQ(r.tokens, expected_tokens(*f.device, prompt, 12));
  EXPECT_EQ(r.finishes[0].finish_reason, "length");
  EXPECT_EQ(r.finishes[0].usage.prompt_tokens, 20);
  EXPECT_EQ(r.finishes[0].usage.completion_tokens, 12);
  EXPECT_TRUE(f.pool_is_full());
}

TEST(Scheduler, AdmitsFirstComeFirstServedWithinMaxSeqs) {
  SchedFixtureOptions o;
  o.sched.max_seqs = 2;
  o.sched.max_batch_tokens = 64;
  SchedFixture f(o);
  f.device->keep_plans(true);
  std::vector<uint64_t> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(f.submit(greedy_request(make_prompt(8, i), 3)));
  f.run();
  for (const StepPlan& p : f.device->plans()) EXPECT_LE(p.seqs.size(), 2u);
  // The first two were prefilled together in the first step.
  ASSERT_FALSE(f.device->plans().empty());
  EXPECT_EQ(f.device->plans()[0].seqs.size(), 2u);
  EXPECT_EQ(f.device->plans()[0].num_rows(), 16);
  for (uint64_t id : ids) EXPECT_EQ(f.req.at(id).finishes.size(), 1u);
  EXPECT_TRUE(f.pool_is_full());
}

TEST(Scheduler, LongPromptsAreSplitIntoChunksThatShareStepsWithDecodeRows) {
  SchedFixtureOptions o;
  o.sched.max_batch_tokens = 32;
  o.sched.max_seqs = 4;
  SchedFixture f(o);
  f.device->keep_plans(true);
  const std::vector<TokenId> short_prompt = make_prompt(5, 3);
  const std::vector<TokenId> long_prompt = make_prompt(100, 4);
  const uint64_t a = f.submit(greedy_request(short_prompt, 30));
  f.sched->tick();  // a is prefilled and decoding
  const uint64_t b = f.submit(greedy_request(long_prompt, 5));
  f.run();
  bool mixed = false;
  for (const StepPlan& p : f.device->plans()) {
    EXPECT_LE(p.num_rows(), 32);
    if (p.seqs.size() == 2 && p.seqs[0].num_rows == 1 && p.seqs[1].num_rows > 1) mixed = true;
  }
  EXPECT_TRUE(mixed) << "no step carried a decode row beside a prefill chunk";
  EXPECT_EQ(f.req.at(a).tokens, expected_tokens(*f.device, short_prompt, 30));
  EXPECT_EQ(f.req.at(b).tokens, expected_tokens(*f.device, long_prompt, 5));
}

TEST(Scheduler, EosEndsWithStopAndItsTextIsNotEmitted) {
  SchedFixture f;
  const TokenId eos = *testing::test_tokenizer().vocab().special().eos;
  f.device->set_next_token([&](std::span<const TokenId> ctx) { return ctx.size() >= 12 ? eos : TokenId{300}; });
  const uint64_t id = f.submit(greedy_request(make_prompt(10, 5), 50));
  f.run();
  const auto& r = f.req.at(id);
  ASSERT_EQ(r.finishes.size(), 1u);
  EXPECT_EQ(r.finishes[0].finish_reason, "stop");
  EXPECT_FALSE(r.finishes[0].stop_string_index.has_value());
  ASSERT_EQ(r.tokens.size(), 3u);  // 300, 300, EOS
  EXPECT_EQ(r.tokens.back(), eos);
  EXPECT_EQ(r.text, testing::test_tokenizer().decode(std::vector<TokenId>{300, 300}));
}

TEST(Scheduler, MinTokensSuppressesEosUntilReached) {
  SchedFixture f;
  const TokenId eos = *testing::test_tokenizer().vocab().special().eos;
  f.device->set_next_token([&](std::span<const TokenId>) { return eos; });
  EngineRequest r = greedy_request(make_prompt(10, 6), 50);
  r.min_tokens = 4;
  const uint64_t id = f.submit(std::move(r));
  f.run();
  const auto& rec = f.req.at(id);
  ASSERT_EQ(rec.tokens.size(), 5u);
  for (size_t i = 0; i < 4; ++i) EXPECT_NE(rec.tokens[i], eos);
  EXPECT_EQ(rec.tokens[4], eos);
  EXPECT_EQ(rec.finishes.at(0).finish_reason, "stop");
}

TEST(Scheduler, LogprobsComeFromTheRawLogitsRowForEveryTokenButEos) {
  SchedFixture f;
  f.device->keep_plans(true);
  const TokenId eos = *testing::test_tokenizer().vocab().special().eos;
  f.device->set_next_token([&](std::span<const TokenId> ctx) { return ctx.size() >= 14 ? eos : TokenId{300}; });
  EngineRequest r = greedy_request(make_prompt(10, 6), 50);
  r.logprobs = 2;
  const uint64_t id = f.submit(std::move(r));
  f.run();
  const auto& rec = f.req.at(id);
  ASSERT_EQ(rec.tokens.size(), 5u);
  ASSERT_EQ(rec.logprobs.size(), 4u) << "EOS ends the output and has no entry";
  // FakeDevice's row: 10 at the next token, 0 elsewhere.
  const double vocab = static_cast<double>(f.device->info().vocab_size);
  const double lse = std::log(std::exp(10.0) + (vocab - 1.0));
  for (const TokenLogprob& lp : rec.logprobs) {
    EXPECT_EQ(lp.token, 300);
    EXPECT_NEAR(lp.logprob, 10.0 - lse, 1e-4);
    ASSERT_EQ(lp.top.size(), 2u);
    EXPECT_EQ(lp.top[0].token, 300);
    EXPECT_EQ(lp.top[1].token, 0) << "equal logits list the smaller id first";
    EXPECT_NEAR(lp.top[1].logprob, -lse, 1e-4);
  }
  for (const StepPlan& p : f.device->plans()) {
    for (const OutputRow& o : p.outputs) EXPECT_EQ(o.kind, OutputKind::kLogits) << "logprobs need the row";
  }
}

// The FakeDevice row for a context: 10 at its next token, 0 elsewhere.
double fake_logprob(const testing::FakeDevice& d, std::span<const TokenId> context, TokenId token) {
  const double vocab = static_cast<double>(d.info().vocab_size);
  const double lse = std::log(std::exp(10.0) + (vocab - 1.0));
  return (d.default_next(context) == token ? 10.0 : 0.0) - lse;
}

void expect_prompt_logprobs(const testing::FakeDevice& d, const std::vector<TokenId>& prompt,
                            const std::vector<TokenLogprob>& got) {
  ASSERT_EQ(got.size(), prompt.size() - 1) << "every prompt token but the first";
  for (size_t k = 0; k < got.size(); ++k) {
    const std::span<const TokenId> context(prompt.data(), k + 1);
    EXPECT_EQ(got[k].token, prompt[k + 1]);
    EXPECT_NEAR(got[k].logprob, fake_logprob(d, context, prompt[k + 1]), 1e-4) << "prompt token " << k + 1;
    ASSERT_EQ(got[k].top.size(), 1u);
    EXPECT_EQ(got[k].top[0].token, d.default_next(context));
  }
}

TEST(Scheduler, PromptLogprobsScoreEveryPromptTokenAcrossChunksWithinTheDevicesOutputs) {
  SchedFixtureOptions o;
  o.sched.max_batch_tokens = 16;
  o.sched.max_seqs = 4;
  o.device.max_seqs = 4;  // FakeDevice: max_outputs = max_seqs
  SchedFixture f(o);
  f.device->keep_plans(true);
  const std::vector<TokenId> prompt = make_prompt(40, 3);
  EngineRequest r = greedy_request(prompt, 3);
  r.prompt_logprobs = 1;
  const uint64_t id = f.submit(std::move(r));
  const uint64_t other = f.submit(greedy_request(make_prompt(30, 4), 3));
  f.run();
  const auto& rec = f.req.at(id);
  expect_prompt_logprobs(*f.device, prompt, rec.prompt_logprobs);
  EXPECT_EQ(rec.tokens, expected_tokens(*f.device, prompt, 3)) << "the output is what it would be without them";
  EXPECT_TRUE(f.req.at(other).prompt_logprobs.empty());
  for (const StepPlan& p : f.device->plans()) EXPECT_LE(p.outputs.size(), 4u);
}

TEST(Scheduler, PromptLogprobsBypassThePrefixCacheSoEveryPositionIsEvaluated) {
  SchedFixture f;
  const std::vector<TokenId> prompt = make_prompt(50, 5);
  f.submit(greedy_request(prompt, 2));
  f.run();
  EngineRequest r = greedy_request(prompt, 2);
  r.prompt_logprobs = 1;
  const uint64_t second = f.submit(std::move(r));
  f.run();
  EXPECT_EQ(f.req.at(second).finishes.at(0).usage.cached_prompt_tokens, 0);
  expect_prompt_logprobs(*f.device, prompt, f.req.at(second).prompt_logprobs);
  const uint64_t third = f.submit(greedy_request(prompt, 2));
  f.run();
  EXPECT_EQ(f.req.at(third).finishes.at(0).usage.cached_prompt_tokens, 48) << "the cache still serves others";
}

TEST(Scheduler, APromptsFullBlocksAreSharedAsSoonAsItsPrefillCompletes) {
  SchedFixture f;
  const std::vector<TokenId> prompt = make_prompt(64, 8);
  const uint64_t first = f.submit(greedy_request(prompt, 40));
  for (int i = 0; i < 3; ++i) f.sched->tick();
  ASSERT_FALSE(f.req.at(first).tokens.empty()) << "the first is decoding";
  ASSERT_TRUE(f.req.at(first).finishes.empty()) << "and still running";
  const uint64_t second = f.submit(greedy_request(prompt, 40));
  f.run();
  EXPECT_EQ(f.req.at(second).finishes.at(0).usage.cached_prompt_tokens, 48)
      << "three full blocks came from the running sequence (the last prompt token is always computed)";
  EXPECT_EQ(f.req.at(second).tokens, f.req.at(first).tokens);
  EXPECT_EQ(f.req.at(first).tokens, expected_tokens(*f.device, prompt, 40));
  EXPECT_TRUE(f.pool_is_full());
}

TEST(Scheduler, RequestsArrivingTogetherWithOnePrefixComputeItOnce) {
  SchedFixture f;
  const std::vector<TokenId> prompt = make_prompt(64, 9);
  std::vector<uint64_t> ids;
  for (int i = 0; i < 3; ++i) ids.push_back(f.submit(greedy_request(prompt, 6)));
  const uint64_t other = f.submit(greedy_request(make_prompt(40, 10), 6));
  f.run();
  EXPECT_EQ(f.req.at(ids[0]).finishes.at(0).usage.cached_prompt_tokens, 0);
  for (int i = 1; i < 3; ++i) {
    EXPECT_EQ(f.req.at(ids[i]).finishes.at(0).usage.cached_prompt_tokens, 48) << "waited for the first's blocks";
    EXPECT_EQ(f.req.at(ids[i]).tokens, f.req.at(ids[0]).tokens);
  }
  EXPECT_EQ(f.req.at(other).tokens.size(), 6u);
  EXPECT_TRUE(f.pool_is_full());
}

TEST(Scheduler, AStopTokenIdEndsTheOutputLikeEos) {
  SchedFixture f;
  f.device->set_next_token([&](std::span<const TokenId> ctx) { return ctx.size() >= 13 ? TokenId{77} : TokenId{300}; });
  EngineRequest r = greedy_request(make_prompt(10, 7), 50);
  r.stop_token_ids = {77};
  const uint64_t id = f.submit(std::move(r));
  f.run();
  EXPECT_EQ(f.req.at(id).tokens.size(), 4u);
  EXPECT_EQ(f.req.at(id).finishes.at(0).finish_reason, "stop");
}

TEST(Scheduler, IgnoreEosKeepsGoingPastEos) {
  SchedFixture f;
  const TokenId eos = *testing::test_tokenizer().vocab().special().eos;
  f.device->set_next_token([&](std::span<const TokenId>) { return eos; });
  EngineRequest r = greedy_request(make_prompt(10, 8), 6);
  r.ignore_eos = true;
  const uint64_t id = f.submit(std::move(r));
  f.run();
  EXPECT_EQ(f.req.at(id).tokens.size(), 6u);
  EXPECT_EQ(f.req.at(id).finishes.at(0).finish_reason, "length");
}

TEST(Scheduler, AStopStringEndsWithStopSaysWhichOneAndIsNotEmitted) {
  SchedFixture f;
  const Tokenizer& tok = testing::test_tokenizer();
  const std::vector<TokenId> script = tok.encode("hello world and more words", EncodeOptions{});
  f.device->set_next_token([&, n = 0](std::span<const TokenId>) mutable {
    return script[static_cast<size_t>(n++) % script.size()];
  });
  EngineRequest r = greedy_request(make_prompt(10, 9), 50);
  r.stop_strings = {"never", "and"};
  const uint64_t id = f.submit(std::move(r));
  f.run();
  const auto& rec = f.req.at(id);
  EXPECT_EQ(rec.text, " hello world ");  // a continuation keeps the leading space
  EXPECT_EQ(rec.finishes.at(0).finish_reason, "stop");
  EXPECT_EQ(rec.finishes.at(0).stop_string_index, std::optional<size_t>(1));
}

TEST(Scheduler, TheContextCeilingEndsWithLength) {
  SchedFixtureOptions o;
  o.sched.max_seq_len = 40;
  SchedFixture f(o);
  const uint64_t id = f.submit(greedy_request(make_prompt(30, 10), 100));
  f.run();
  EXPECT_EQ(f.req.at(id).tokens.size(), 10u);
  EXPECT_EQ(f.req.at(id).finishes.at(0).finish_reason, "length");
}

TEST(Scheduler, ADeadlinePassedMidDecodeGivesTimeout) {
  SchedFixture f;
  EngineRequest r = greedy_request(make_prompt(10, 11), 1000);
  r.timeout = std::chrono::milliseconds(100);
  const uint64_t id = f.submit(std::move(r));
  for (int i = 0; i < 5; ++i) f.sched->tick();
  const size_t before_deadline = f.req.at(id).tokens.size();
  EXPECT_GT(before_deadline, 2u);
  f.clock.advance(std::chrono::milliseconds(150));
  f.run();
  const auto& rec = f.req.at(id);
  ASSERT_EQ(rec.finishes.size(), 1u);
  EXPECT_EQ(rec.finishes[0].finish_reason, "timeout");
  EXPECT_EQ(rec.finishes[0].guard_stop, "request_timeout");
  EXPECT_EQ(rec.tokens.size(), before_deadline);  // nothing is committed after the deadline
  EXPECT_TRUE(f.pool_is_full());
}

TEST(Scheduler, ADeadlinePassedWhileWaitingGivesTimeoutWithNoOutput) {
  SchedFixtureOptions o;
  o.sched.max_seqs = 1;
  o.sched.max_batch_tokens = 16;
  SchedFixture f(o);
  const uint64_t first = f.submit(greedy_request(make_prompt(10, 12), 50));
  EngineRequest r = greedy_request(make_prompt(10, 13), 50);
  r.timeout = std::chrono::milliseconds(10);
  const uint64_t second = f.submit(std::move(r));
  f.sched->tick();
  f.clock.advance(std::chrono::milliseconds(20));
  f.run();
  EXPECT_EQ(f.req.at(first).finishes.at(0).finish_reason, "length");
  EXPECT_EQ(f.req.at(second).finishes.at(0).finish_reason, "timeout");
  EXPECT_TRUE(f.req.at(second).tokens.empty());
}

TEST(Scheduler, ACancelledRequestGetsAnErrorFrameAndFreesItsBlocks) {
  SchedFixture f;
  auto stream = std::make_shared<ResponseStream>();
  f.sched->enqueue(greedy_request(make_prompt(40, 14), 1000), ResponseSink(RequestId(99), stream), f.clock.now());
  const uint64_t other = f.submit(greedy_request(make_prompt(10, 15), 20));
  for (int i = 0; i < 3; ++i) f.sched->tick();
  stream->cancel();
  f.run();
  const auto& rec = f.req.at(99);
  ASSERT_EQ(rec.errors.size(), 1u);
  EXPECT_EQ(rec.num_terminal(), 1);
  EXPECT_EQ(f.req.at(other).finishes.size(), 1u);
  EXPECT_TRUE(f.pool_is_full());
}

TEST(Scheduler, MaxTokensZeroFinishesAtOnceWithLength) {
  SchedFixture f;
  const uint64_t id = f.submit(greedy_request(make_prompt(5, 1), 0));
  EXPECT_EQ(f.req.at(id).finishes.at(0).finish_reason, "length");
  EXPECT_EQ(f.device->num_steps(), 0);
}

TEST(Scheduler, APrefixHitReusesCachedBlocksAndCountsCachedTokens) {
  SchedFixture f;
  const std::vector<TokenId> prompt = make_prompt(70, 20);
  const uint64_t a = f.submit(greedy_request(prompt, 4));
  f.run();
  f.device->keep_plans(true);
  const uint64_t b = f.submit(greedy_request(prompt, 4));
  f.run();
  EXPECT_EQ(f.req.at(a).finishes.at(0).usage.cached_prompt_tokens, 0);
  EXPECT_EQ(f.req.at(b).finishes.at(0).usage.cached_prompt_tokens, 64);
  EXPECT_EQ(f.device->plans().at(0).num_rows(), 6);  // only the 6 tokens past the 4 cached blocks
  EXPECT_EQ(f.req.at(b).tokens, f.req.at(a).tokens);
  EXPECT_EQ(f.tel.num_query_tokens, 140);
  EXPECT_EQ(f.tel.num_hit_tokens, 64);
}

TEST(Scheduler, PrefixHitsNeverCrossTenantsOrAdapters) {
  SchedFixtureOptions o;
  o.device.num_adapter_slots = 1;
  SchedFixture f(o);
  auto lora = std::make_shared<LoraAdapter>();
  lora->name = "x";
  lora->max_rank = 4;
  const std::vector<TokenId> prompt = make_prompt(70, 21);
  EngineRequest a = greedy_request(prompt, 2);
  a.cache_salt = "alice";
  f.submit(std::move(a));
  f.run();
  EngineRequest bob = greedy_request(prompt, 2);
  bob.cache_salt = "bob";
  const uint64_t b = f.submit(std::move(bob));
  EngineRequest adapter = greedy_request(prompt, 2);
  adapter.cache_salt = "alice";
  adapter.adapter = lora;
  adapter.adapter_id = 3;
  const uint64_t c = f.submit(std::move(adapter));
  EngineRequest alice2 = greedy_request(prompt, 2);
  alice2.cache_salt = "alice";
  const uint64_t d = f.submit(std::move(alice2));
  f.run();
  EngineRequest adapter2 = greedy_request(prompt, 2);
  adapter2.cache_salt = "alice";
  adapter2.adapter = lora;
  adapter2.adapter_id = 3;
  const uint64_t e = f.submit(std::move(adapter2));
  f.run();
  EXPECT_EQ(f.req.at(b).finishes.at(0).usage.cached_prompt_tokens, 0);
  EXPECT_EQ(f.req.at(c).finishes.at(0).usage.cached_prompt_tokens, 0);
  EXPECT_EQ(f.req.at(d).finishes.at(0).usage.cached_prompt_tokens, 64);
  EXPECT_EQ(f.req.at(e).finishes.at(0).usage.cached_prompt_tokens, 64) << "the adapter's own prefix missed";
}

TEST(Scheduler, AFailedSequenceIsNeverCached) {
  ScopedFaultReset reset;
  SchedFixture f;
  const std::vector<TokenId> prompt = make_prompt(70, 22);
  f.device->fail_every(testing::DeviceCall::kLaunch);
  const uint64_t a = f.submit(greedy_request(prompt, 4));
  f.run();
  ASSERT_EQ(f.req.at(a).errors.size(), 1u);
  EXPECT_FALSE(is_faulted());  // a refused launch ran nothing: no fault
  EXPECT_EQ(f.kv->prefix_cache().num_hit_tokens(), 0);
  EXPECT_TRUE(f.pool_is_full());
}

TEST(Scheduler, AFailedStepFaultsTheProcessAndAnswersEveryRequest) {
  ScopedFaultReset reset;
  SchedFixtureOptions o;
  o.sched.max_seqs = 2;
  SchedFixture f(o);
  std::vector<uint64_t> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(f.submit(greedy_request(make_prompt(10, 30 + i), 10)));
  f.sched->tick();
  f.device->fail_every(testing::DeviceCall::kAwait);
  f.run();
  EXPECT_TRUE(is_faulted());
  for (uint64_t id : ids) {
    EXPECT_EQ(f.req.at(id).num_terminal(), 1);
    EXPECT_EQ(f.req.at(id).errors.size(), 1u);
  }
  EXPECT_TRUE(f.pool_is_full());
}

TEST(Scheduler, PreemptionBySwapOrRecomputeGivesTheUninterruptedTokens) {
  SchedFixtureOptions big;
  big.device.num_kv_blocks = 256;
  big.sched.max_seqs = 8;
  SchedFixture reference(big);
  const auto want = run_many(reference, 8);
  EXPECT_EQ(reference.tel.num_swaps + reference.tel.num_recomputes, 0);

  SchedFixtureOptions small = big;
  small.device.num_kv_blocks = 14;
  small.sched.preempt = PreemptMode::kRecompute;
  SchedFixture recompute(small);
  EXPECT_EQ(run_many(recompute, 8), want);
  EXPECT_GT(recompute.tel.num_recomputes, 0);

  small.sched.preempt = PreemptMode::kSwap;
  small.with_spill = true;
  SchedFixture swap(small);
  EXPECT_EQ(run_many(swap, 8), want);
  EXPECT_GT(swap.tel.num_swaps, 0);
  EXPECT_TRUE(std::filesystem::is_empty(swap.spill_dir.path()));
}

// Three sequences in lockstep through a 5-block pool: C is swapped out
// first, then B; C is resumed and is immune, so when A and C next need a
// block together, A (admitted earlier, not immune) gives way, not C (the
// latest admitted).
TEST(Scheduler, AResumedSequenceIsNotPreemptedAgainWhileImmune) {
  SchedFixtureOptions o;
  o.device.num_kv_blocks = 5;
  o.sched.max_seqs = 3;
  o.sched.max_batch_tokens = 64;
  o.sched.pipeline = false;
  o.sched.preempt = PreemptMode::kSwap;
  o.with_spill = true;
  SchedFixture f(o);
  const uint64_t a = f.submit(greedy_request(make_prompt(16, 1), 60));
  f.submit(greedy_request(make_prompt(16, 2), 60));
  const uint64_t c = f.submit(greedy_request(make_prompt(16, 3), 60));
  bool checked = false;
  for (int tick = 0; tick < 10000 && !f.sched->idle(); ++tick) {
    const int swaps_before = f.tel.num_swaps;
    const size_t a_before = f.req.at(a).tokens.size();
    const size_t c_before = f.req.at(c).tokens.size();
    f.sched->tick();
    if (!checked && swaps_before == 2 && f.tel.num_swaps == 3) {
      // The third swap-out happened in this tick: C (resumed, immune) kept
      // decoding and A was the one swapped out.
      EXPECT_EQ(f.req.at(a).tokens.size(), a_before);
      EXPECT_EQ(f.req.at(c).tokens.size(), c_before + 1);
      checked = true;
    }
  }
  EXPECT_TRUE(checked) << "the scenario never reached a third swap-out";
  for (const auto& [id, rec] : f.req.all()) EXPECT_EQ(rec.finishes.size(), 1u) << id;
  EXPECT_TRUE(f.pool_is_full());
}

TEST(Scheduler, ASequenceAloneThatOutgrowsThePoolIsCutWithLength) {
  SchedFixtureOptions o;
  o.device.num_kv_blocks = 3;  // 48 tokens
  SchedFixture f(o);
  const uint64_t id = f.submit(greedy_request(make_prompt(30, 40), 100));
  f.run();
  const auto& rec = f.req.at(id);
  EXPECT_EQ(rec.finishes.at(0).finish_reason, "length");
  EXPECT_EQ(rec.finishes.at(0).guard_stop, "kv_exhausted");
  EXPECT_EQ(rec.tokens.size(), 19u);  // positions 30..47 filled, the 19th token has no slot
  EXPECT_TRUE(f.pool_is_full());
}

}  // namespace
}  // namespace met
