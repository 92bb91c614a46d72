// Tests for scheduler/speculation.h on rows whose token the host picks, on
// a FakeDevice whose logits put 10 on a token that cycles (so prompt lookup
// and predictions draft well) and 0 elsewhere (so a sampled row often
// leaves the cycle): with the same seed, sampled output with speculation on
// is the output with it off, token for token, under penalties, top-p, the
// pipelined lane and logprobs, and with MTP drafts on a recurrent model; over independent seeds, the distribution of
// the first tokens with speculation passes a chi-square homogeneity test
// against the distribution without (the rule's own exactness test, with
// negative controls, is tests/spec/acceptance_test.cc). min_tokens ending
// inside a draft, a grammar and a thinking budget's forced think-end leave
// the output alone; a request's max_draft_tokens caps its drafts and 0 turns
// them off.
#include <gtest/gtest.h>

#include <array>
#include <functional>
#include <vector>

#include "grammar/json_schema.h"
#include "scheduler/speculation.h"
#include "scheduler_fixture.h"

namespace met {
namespace {

using testing::greedy_request;
using testing::make_prompt;
using testing::SchedFixture;
using testing::SchedFixtureOptions;

// A 6-token cycle from the last token of the context, 60 -> 61 -> ... -> 65.
TokenId cycle_token(std::span<const TokenId> ctx) { return testing::cycle_next(ctx, 60, 6); }

SchedFixtureOptions sampled_spec(int32_t max_draft, bool pipeline) {
  return testing::with_prompt_lookup({}, max_draft, 1, 3, pipeline);
}

struct SampledRun {
  std::vector<testing::RecordedRequest> requests;
  int64_t drafted = 0;
  int64_t accepted = 0;
  int num_steps = 0;
};

// Runs `requests` to the end on the cycling device; each gets one terminal
// frame and the pool is full after.
SampledRun run_requests(SchedFixtureOptions o, std::vector<EngineRequest> requests,
                        const std::function<TokenId(std::span<const TokenId>)>& next = cycle_token) {
  SchedFixture f(o);
  f.device->set_next_token(next);
  std::vector<uint64_t> ids;
  for (EngineRequest& r : requests) ids.push_back(f.submit(std::move(r)));
  f.run();
  SampledRun run;
  for (uint64_t id : ids) {
    EXPECT_EQ(f.req.at(id).num_terminal(), 1);
    run.requests.push_back(f.req.at(id));
  }
  EXPECT_TRUE(f.pool_is_full());
  run.drafted = f.tel.num_drafted;
  run.accepted = f.tel.num_accepted;
  run.num_steps = f.tel.num_steps;
  return run;
}

EngineRequest sampled_request(uint64_t seed, float temperature, int32_t max_tokens) {
  EngineRequest r = greedy_request(make_prompt(24, static_cast<uint32_t>(seed)), max_tokens);
  r.sampling.temperature = temperature;
  r.sampling.seed = seed;
  return r;
}

std::vector<EngineRequest> mixed_samplers(int n) {
  std::vector<EngineRequest> out;
  for (int i = 0; i < n; ++i) {
    EngineRequest r = sampled_request(static_cast<uint64_t>(i + 1), i % 2 == 0 ? 1.0f : 1.6f, 70);
    if (i % 3 == 1) r.sampling.top_p = 0.9f;
    if (i % 3 == 2) r.sampling.repetition_penalty = 1.2f;
    if (i % 4 == 3) r.sampling.frequency_penalty = 0.5f;
    out.push_back(std::move(r));
  }
  return out;
}

TEST(SpeculationSampled, TheSameSeedGivesTheOutputWithoutItTokenForToken) {
  const SampledRun off = run_requests(sampled_spec(0, false), mixed_samplers(8));
  for (bool pipeline : {false, true}) {
    const SampledRun on = run_requests(sampled_spec(4, pipeline), mixed_samplers(8));
    ASSERT_EQ(on.requests.size(), off.requests.size());
    for (size_t i = 0; i < on.requests.size(); ++i) {
      EXPECT_EQ(on.requests[i].tokens, off.requests[i].tokens) << "request " << i << " pipeline " << pipeline;
    }
    EXPECT_GT(on.accepted, 50) << "the cycle is drafted and often sampled";
    EXPECT_LT(on.accepted, on.drafted) << "sampling leaves the cycle: some drafts are rejected";
    EXPECT_LT(on.num_steps, off.num_steps);
  }
}

// The model's MTP block drafting mixed samplers on a recurrent model (the
// state kept after each verify row): the same seeds give the output without
// it, token for token, pipelined or not; drafts are accepted and rejected.
TEST(SpeculationSampled, MtpDraftsOnARecurrentModelKeepTheSeededOutput) {
  auto recurrent = [](bool mtp, bool pipeline) {
    SchedFixtureOptions o = sampled_spec(0, pipeline);
    o.device.num_state_slots = o.sched.max_seqs;
    o.device.state_drafts = 4;
    o.device.policy = FedAheadPolicy::kRepickOnly;
    o.sched.spec.mtp = mtp;
    if (mtp) {
      o.device.mtp = [](std::span<const TokenId> ctx) {  // the context, the state's two entries, the argmax
        std::vector<TokenId> seen(ctx.begin(), ctx.end() - 3);
        seen.push_back(ctx.back());
        return cycle_token(seen);
      };
    }
    return o;
  };
  const auto next = [](std::span<const TokenId> ctx) { return cycle_token(ctx.first(ctx.size() - 2)); };
  const SampledRun off = run_requests(recurrent(false, false), mixed_samplers(8), next);
  for (bool pipeline : {false, true}) {
    const SampledRun on = run_requests(recurrent(true, pipeline), mixed_samplers(8), next);
    ASSERT_EQ(on.requests.size(), off.requests.size());
    for (size_t i = 0; i < on.requests.size(); ++i) {
      EXPECT_EQ(on.requests[i].tokens, off.requests[i].tokens) << "request " << i << " pipeline " << pipeline;
    }
    EXPECT_GT(on.accepted, 50) << "pipeline " << pipeline;
    EXPECT_LT(on.accepted, on.drafted) << "pipeline " << pipeline;
  }
}

TEST(SpeculationSampled, LogprobsArePerCommittedTokenAsWithoutIt) {
  auto requests = [] {
    std::vector<EngineRequest> out;
    for (int i = 0; i < 3; ++i) {
      EngineRequest r = i == 0 ? greedy_request(make_prompt(24, 5), 50) : sampled_request(7 + i, 1.0f, 50);
      r.logprobs = 2;
      out.push_back(std::move(r));
    }
    return out;
  };
  const SampledRun off = run_requests(sampled_spec(0, false), requests());
  const SampledRun on = run_requests(sampled_spec(4, false), requests());
  ASSERT_GT(on.accepted, 0);
  for (size_t i = 0; i < on.requests.size(); ++i) {
    EXPECT_EQ(on.requests[i].tokens, off.requests[i].tokens) << i;
    ASSERT_EQ(on.requests[i].logprobs.size(), on.requests[i].tokens.size()) << i;
    ASSERT_EQ(on.requests[i].logprobs.size(), off.requests[i].logprobs.size()) << i;
    for (size_t t = 0; t < on.requests[i].logprobs.size(); ++t) {
      EXPECT_EQ(on.requests[i].logprobs[t].token, off.requests[i].logprobs[t].token);
      EXPECT_EQ(on.requests[i].logprobs[t].logprob, off.requests[i].logprobs[t].logprob);
      EXPECT_EQ(on.requests[i].logprobs[t].top.size(), off.requests[i].logprobs[t].top.size());
    }
  }
}

// How many of a request's first three tokens are the device's token (0..3):
// four cells whose probabilities the temperature sets.
std::array<int, 4> first_token_cells(const SampledRun& run) {
  std::array<int, 4> cells{};
  for (const testing::RecordedRequest& r : run.requests) {
    int hits = 0;
    for (size_t t = 0; t < 3 && t < r.tokens.size(); ++t) {
      const std::span<const TokenId> before(r.tokens.data(), t);
      const TokenId expected = t == 0 ? TokenId{60} : cycle_token(before);
      if (r.tokens[t] == expected && (t == 0 || hits == static_cast<int>(t))) ++hits;
    }
    ++cells[static_cast<size_t>(hits)];
  }
  return cells;
}

// Two samples of 600 requests on disjoint seeds, each drafted the cycle by
// its prediction: the counts of leading cycle tokens are homogeneous at
// significance 0.001 (chi-square, 3 degrees of freedom: 16.27).
TEST(SpeculationSampled, OverIndependentSeedsTheFirstTokensAreDistributedAsWithoutIt) {
  constexpr int kPerSample = 600;
  auto sample = [](uint64_t first_seed, bool predicted) {
    std::vector<EngineRequest> out;
    for (int i = 0; i < kPerSample; ++i) {
      EngineRequest r = sampled_request(first_seed + static_cast<uint64_t>(i), 1.5f, 3);
      r.prompt = {59};  // the cycle starts at the first output token
      if (predicted) r.prediction = {60, 61, 62, 63};
      out.push_back(std::move(r));
    }
    return out;
  };
  SchedFixtureOptions o = sampled_spec(0, false);
  o.sched.max_seqs = 4;  // the fake device gives max_seqs outputs a step: room for drafts
  const SampledRun off = run_requests(o, sample(1, false));
  const SampledRun on = run_requests(o, sample(100001, true));
  ASSERT_GT(on.accepted, 100);
  const std::array<int, 4> a = first_token_cells(off), b = first_token_cells(on);
  double chi2 = 0;
  for (size_t c = 0; c < 4; ++c) {
    const double total = a[c] + b[c];
    if (total == 0) continue;
    const double expected = total / 2.0;  // equal sample sizes
    chi2 += (a[c] - expected) * (a[c] - expected) / expected + (b[c] - expected) * (b[c] - expected) / expected;
  }
  EXPECT_LT(chi2, 16.27) << a[0] << " " << a[1] << " " << a[2] << " " << a[3] << " vs " << b[0] << " " << b[1]
                         << " " << b[2] << " " << b[3];
  EXPECT_GT(a[0], 50) << "the temperature leaves the cycle often enough to test";
  EXPECT_GT(a[3], 50);
}

// min_tokens 12 bans EOS while the output is shorter; the device asks for
// EOS at every context length from 30 on, so the output ends at once after
// the ban lifts, inside a draft of 6.
TEST(SpeculationSampled, MinTokensEndingInsideADraftEndsTheOutputWhereItWould) {
  auto requests = [] {
    std::vector<EngineRequest> out;
    for (int i = 0; i < 4; ++i) {
      EngineRequest r = greedy_request(make_prompt(24, 40 + static_cast<uint32_t>(i)), 40);
      r.min_tokens = 10 + i;
      if (i % 2 == 1) {
        r.sampling.temperature = 0.5f;
        r.sampling.seed = static_cast<uint64_t>(i);
      }
      out.push_back(std::move(r));
    }
    return out;
  };
  auto eos_late = [](std::span<const TokenId> ctx) { return ctx.size() >= 30 ? TokenId{2} : cycle_token(ctx); };
  std::array<SampledRun, 2> runs;
  for (int on = 0; on < 2; ++on) {
    SchedFixture f(sampled_spec(on == 1 ? 6 : 0, false));
    f.device->set_next_token(eos_late);
    std::vector<uint64_t> ids;
    for (EngineRequest& r : requests()) ids.push_back(f.submit(std::move(r)));
    f.run();
    for (uint64_t id : ids) runs[static_cast<size_t>(on)].requests.push_back(f.req.at(id));
    runs[static_cast<size_t>(on)].accepted = f.tel.num_accepted;
    EXPECT_TRUE(f.pool_is_full());
  }
  EXPECT_GT(runs[1].accepted, 0);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(runs[1].requests[i].tokens, runs[0].requests[i].tokens) << i;
    // EOS (its id reaches the sink, its text does not) as soon as min_tokens allows.
    ASSERT_EQ(runs[1].requests[i].tokens.size(), 11 + i);
    EXPECT_EQ(runs[1].requests[i].tokens.back(), TokenId{2});
    ASSERT_EQ(runs[1].requests[i].finishes.size(), 1u);
    EXPECT_EQ(runs[1].requests[i].finishes[0].finish_reason, "stop");
  }
}

// {"a": "x" | "y", "n": integer}
constexpr const char* kAnswerSchema = R"({"type": "object", "properties": {
    "a": {"enum": ["x", "y"]}, "n": {"type": "integer", "minimum": 0, "maximum": 99}},
    "required": ["a", "n"], "additionalProperties": false})";

// Sampled requests under a grammar, drafted by prompt lookup and by a
// prediction equal to their output without speculation: the grammar's mask
// applies at every draft position (each draft advanced the matcher).
TEST(SpeculationSampled, AGrammarHoldsAtEveryDraftPosition) {
  auto requests = [](const std::vector<testing::RecordedRequest>* predicted) {
    std::vector<EngineRequest> out;
    for (int i = 0; i < 6; ++i) {
      EngineRequest r = sampled_request(static_cast<uint64_t>(i + 3), 1.0f, 60);
      Result<Grammar> g = compile_json_schema(std::string_view(kAnswerSchema));
      EXPECT_TRUE(g.ok()) << g.status().message();
      r.grammar = std::make_shared<const Grammar>(std::move(*g));
      if (predicted != nullptr) r.prediction = (*predicted)[static_cast<size_t>(i)].tokens;
      out.push_back(std::move(r));
    }
    return out;
  };
  const SampledRun off = run_requests(sampled_spec(0, false), requests(nullptr));
  const SampledRun on = run_requests(sampled_spec(4, true), requests(&off.requests));
  ASSERT_GT(on.accepted, 20);
  for (size_t i = 0; i < on.requests.size(); ++i) {
    EXPECT_EQ(on.requests[i].tokens, off.requests[i].tokens) << i;
    EXPECT_EQ(on.requests[i].text, off.requests[i].text) << i;
    ASSERT_EQ(on.requests[i].finishes.size(), 1u);
    EXPECT_EQ(on.requests[i].finishes[0].finish_reason, "stop") << on.requests[i].text;
  }
}

constexpr TokenId kThinkOpen = 300, kThinkClose = 301;

// A thinking budget of 6 forces think-end inside a draft of the cycle, for a
// greedy request (argmax rows: the step ends its drafts there) and a sampled
// one (the forced token is picked at its row).
TEST(SpeculationSampled, AForcedThinkEndInsideADraftComesWhereItWould) {
  auto requests = [] {
    std::vector<EngineRequest> out;
    for (int i = 0; i < 2; ++i) {
      EngineRequest r = i == 0 ? greedy_request(make_prompt(12, 3), 30) : sampled_request(5, 1.0f, 30);
      ThinkingConfig t;
      t.think_start = kThinkOpen;
      t.think_end = kThinkClose;
      t.starts_inside = true;
      t.budget = 6;
      t.watchdog = false;
      r.thinking = t;
      out.push_back(std::move(r));
    }
    return out;
  };
  const SampledRun off = run_requests(sampled_spec(0, false), requests());
  const SampledRun on = run_requests(sampled_spec(5, false), requests());
  EXPECT_GT(on.accepted, 5);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(on.requests[i].tokens, off.requests[i].tokens) << i;
    ASSERT_GT(on.requests[i].tokens.size(), 6u);
    EXPECT_EQ(on.requests[i].tokens[6], kThinkClose) << i;
    EXPECT_EQ(on.requests[i].finishes.at(0).usage.reasoning_tokens, 6) << i;
  }
}

// max_draft_tokens 2: no step verifies more than 2 drafts for the request;
// 0: none at all, its prediction included; either way the output is the same.
TEST(SpeculationSampled, ARequestsDraftCapHoldsAndZeroTurnsSpeculationOff) {
  std::vector<TokenId> plain;
  for (int32_t cap : {-1, 2, 0}) {
    SchedFixture f(sampled_spec(6, false));
    f.device->set_next_token(cycle_token);
    f.device->keep_plans(true);
    EngineRequest r = greedy_request(make_prompt(24, 9), 60);
    if (cap >= 0) r.max_draft_tokens = cap;
    r.prediction = std::vector<TokenId>(30, 61);  // wrong, but drafted every step it is in step with
    const uint64_t id = f.submit(std::move(r));
    f.run();
    size_t most_outputs = 0;
    for (const StepPlan& p : f.device->plans()) most_outputs = std::max(most_outputs, p.outputs.size());
    if (cap < 0) {
      plain = f.req.at(id).tokens;
      // The prediction's drafts and the decode row: the prediction is picked
      // up where the output's 61 falls at its place.
      EXPECT_EQ(most_outputs, static_cast<size_t>(SpecOptions{}.prediction_draft) + 1);
    } else {
      EXPECT_EQ(f.req.at(id).tokens, plain);
      EXPECT_EQ(most_outputs, static_cast<size_t>(cap) + 1) << cap;
    }
    if (cap == 0) {
      EXPECT_EQ(f.tel.num_drafted, 0);
      EXPECT_EQ(f.req.at(id).finishes.at(0).usage.rejected_prediction_tokens, 0);
    }
    EXPECT_TRUE(f.pool_is_full());
  }
}

}  // namespace
}  // namespace met
