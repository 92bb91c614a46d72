// Differential tests of the decode lanes: for seeded mixed workloads (greedy
// and sampled rows, min_tokens, stop strings, max_tokens, cancellations,
// deadlines, preemption under a tight pool) the pipelined lane, the
// synchronous lane and the sequential reference loop give the same token
// streams and finish reasons.
#include <gtest/gtest.h>

#include <random>

#include "scheduler_fixture.h"
#include "testing/reference_loop.h"

namespace met {
namespace {

using testing::make_prompt;

struct Case {
  EngineRequest request;
  int cancel_after = -1;  // tokens received before the client cancels
  bool deadline = false;
};

std::vector<Case> workload(uint32_t seed) {
  std::mt19937 rng(seed);
  const char* stops[] = {"e", "a", "in", "o"};
  std::vector<Case> cases;
  for (int i = 0; i < 24; ++i) {
    Case c;
    c.request.prompt = make_prompt(1 + static_cast<int>(rng() % 60), seed * 100 + static_cast<uint32_t>(i));
    c.request.max_tokens = 1 + static_cast<int>(rng() % 40);
    if (rng() % 3 == 0) c.request.stop_strings.push_back(stops[rng() % 4]);
    if (rng() % 4 == 0) {
      c.request.sampling.temperature = 0.8f;
      c.request.sampling.seed = rng();
    }
    if (rng() % 5 == 0) c.request.min_tokens = std::min(c.request.max_tokens, 1 + static_cast<int>(rng() % 6));
    if (rng() % 8 == 0) {
      c.cancel_after = 1 + static_cast<int>(rng() % 6);
    } else if (rng() % 7 == 0) {
      c.request.timeout = std::chrono::milliseconds(5 + rng() % 30);
      c.deadline = true;
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

struct Outcome {
  std::vector<TokenId> tokens;
  std::string text;
  std::string finish_reason;  // "" for an error frame
  int num_terminal = 0;
};

std::vector<Outcome> run_lane(const std::vector<Case>& cases, bool pipeline, int32_t blocks, PreemptMode preempt) {
  testing::SchedFixtureOptions o;
  o.device.num_kv_blocks = blocks;
  o.sched.max_seqs = 8;
  o.sched.max_batch_tokens = 64;
  o.sched.pipeline = pipeline;
  o.sched.preempt = preempt;
  o.with_spill = preempt == PreemptMode::kSwap;
  testing::SchedFixture f(o);
  std::vector<std::shared_ptr<ResponseStream>> streams;
  for (size_t i = 0; i < cases.size(); ++i) {
    streams.push_back(std::make_shared<ResponseStream>());
    f.sched->enqueue(cases[i].request, ResponseSink(RequestId(i + 1), streams.back()), f.clock.now());
  }
  // The client cancels as soon as it has received its cancel_after-th token.
  f.req.on_delta = [&](uint64_t id, size_t num_tokens) {
    const Case& c = cases[id - 1];
    if (c.cancel_after >= 0 && static_cast<int>(num_tokens) >= c.cancel_after) streams[id - 1]->cancel();
  };
  int ticks = 0;
  while (!f.sched->idle() && ticks++ < 100000) {
    f.sched->tick();
    f.clock.advance(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(f.pool_is_full());
  std::vector<Outcome> out;
  for (size_t i = 0; i < cases.size(); ++i) {
    const testing::RecordedRequest& r = f.req.at(i + 1);
    Outcome oc{r.tokens, r.text, r.finishes.empty() ? "" : r.finishes[0].finish_reason, r.num_terminal()};
    out.push_back(std::move(oc));
  }
  return out;
}

void expect_lanes_agree(uint32_t seed, int32_t blocks, PreemptMode preempt) {
  const std::vector<Case> cases = workload(seed);
  const std::vector<Outcome> sync = run_lane(cases, false, blocks, preempt);
  const std::vector<Outcome> piped = run_lane(cases, true, blocks, preempt);
  testing::FakeDeviceOptions ro;
  ro.vocab_size = static_cast<int32_t>(testing::test_tokenizer().vocab().size());
  ro.avoid = testing::test_tokenizer().vocab().eog_ids();
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed << " request " << i);
    ASSERT_EQ(sync[i].num_terminal, 1);
    ASSERT_EQ(piped[i].num_terminal, 1);
    testing::FakeDevice ref_device(ro);
    const testing::ReferenceOutcome ref = testing::run_reference(ref_device, testing::test_tokenizer(), cases[i].request);
    if (cases[i].deadline) {
      // A deadline is wall time: each lane stops where the clock found it, on
      // a prefix of the uninterrupted stream.
      for (const Outcome* o : {&sync[i], &piped[i]}) {
        ASSERT_LE(o->tokens.size(), ref.tokens.size());
        EXPECT_TRUE(std::equal(o->tokens.begin(), o->tokens.end(), ref.tokens.begin()));
        if (o->finish_reason != "timeout") {
          EXPECT_EQ(o->tokens, ref.tokens);
        }
      }
      continue;
    }
    EXPECT_EQ(piped[i].tokens, sync[i].tokens);
    EXPECT_EQ(piped[i].text, sync[i].text);
    EXPECT_EQ(piped[i].finish_reason, sync[i].finish_reason);
    if (cases[i].cancel_after >= 0) {
      EXPECT_TRUE(std::equal(sync[i].tokens.begin(), sync[i].tokens.end(), ref.tokens.begin()));
      continue;
    }
    EXPECT_EQ(sync[i].tokens, ref.tokens);
    EXPECT_EQ(sync[i].text, ref.text);
    EXPECT_EQ(sync[i].finish_reason, ref.finish_reason);
  }
}

TEST(PipelineDifferential, MixedWorkloadsAgreeWithABigPool) {
  for (uint32_t seed = 1; seed <= 4; ++seed) expect_lanes_agree(seed, 256, PreemptMode::kRecompute);
}

TEST(PipelineDifferential, MixedWorkloadsAgreeUnderPreemptionByRecompute) {
  for (uint32_t seed = 5; seed <= 8; ++seed) expect_lanes_agree(seed, 12, PreemptMode::kRecompute);
}

TEST(PipelineDifferential, MixedWorkloadsAgreeUnderPreemptionBySwap) {
  for (uint32_t seed = 9; seed <= 12; ++seed) expect_lanes_agree(seed, 12, PreemptMode::kSwap);
}

}  // namespace
}  // namespace met
