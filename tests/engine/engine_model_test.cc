// The engine on a real model (stories260K, greedy): preemption by swap and by
// recompute gives exactly the tokens of an uninterrupted run, and a soak of
// 200 requests with random lengths, stop strings, cancellations and deadlines
// through a pool too small for all of them ends every request with the right
// frame and leaks nothing. Speculative decoding by prompt lookup gives the
// tokens of a run without it, in fewer steps.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "engine/engine.h"
#include "model_engine.h"
#include "testing/collected_stream.h"
#include "gguf/gguf_file.h"
#include "kv/spill_store.h"
#include "model/cpu_device.h"
#include "model/model.h"
#include "testing/shared_data.h"
#include "testing/temp_dir.h"

namespace met {
namespace {

using Outcome = testing::CollectedStream;
using testing::ModelEngine;

const char* kPrompts[16] = {
    "Once upon a time",        "The little dog",      "Lily and Ben went to the park",
    "One day, a big bird",     "Tom had a red ball",  "The sun was shining and",
    "Sue liked to play with",  "There was a cat",     "Mom said",
    "A boy named Tim",         "The tree was tall",   "In the garden, the flowers",
    "Bob found a box",         "It was a cold day",   "The fish swam",
    "She wanted to",
};

std::vector<Outcome> run_prompts(ModelEngine& m, int32_t max_tokens = 48) {
  std::vector<RequestHandle> handles;
  for (const char* p : kPrompts) {
    EngineRequest r;
    r.prompt = m.tokenizer().encode(p, EncodeOptions{.add_special = true});
    r.max_tokens = max_tokens;
    Result<RequestHandle> h = m.engine().submit(std::move(r));
    EXPECT_TRUE(h.ok());
    handles.push_back(std::move(*h));
  }
  std::vector<Outcome> out;
  for (RequestHandle& h : handles) out.push_back(testing::collect_stream(h));
  m.engine().drain();
  EXPECT_EQ(m.engine().kv_blocks_in_use(), 0);
  return out;
}

// stories260K's greedy stories repeat themselves over a few hundred tokens
// ("Lily", "to the park", whole sentences): prompt lookup drafts from them.
// Synchronous runs compare exactly: every verified draft adds a row, and
// every accepted one saves the row (and the step) that would have decoded it
// (the draft budget off: every proposal is verified). With the budget on,
// which on this compute-bound batch of 16 holds most drafts back, the tokens
// are the same.
TEST(EngineOnStories, PromptLookupSpeculationGivesTheSameTokensInFewerSteps) {
  MET_REQUIRE_SHARED(path, "models/stories260K.gguf");
  constexpr int32_t kMaxTokens = 240;
  for (bool pipeline : {false, true}) {
    ModelEngine plain(path, 1024, 16, std::nullopt, pipeline);
    const std::vector<Outcome> want = run_prompts(plain, kMaxTokens);
    SpecOptions lookup;
    lookup.max_draft = 4;
    lookup.min_ngram = 2;
    lookup.max_ngram = 4;
    lookup.adaptive = false;
    ModelEngine spec(path, 1024, 16, std::nullopt, pipeline, 1, 0, lookup);
    const std::vector<Outcome> got = run_prompts(spec, kMaxTokens);
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got[i].tokens, want[i].tokens) << kPrompts[i] << " pipeline " << pipeline;
      EXPECT_EQ(got[i].text, want[i].text);
    }
    const EngineStatsSnapshot p = plain.engine().stats(), s = spec.engine().stats();
    EXPECT_GT(s.spec_accepted, 0) << "pipeline " << pipeline;
    EXPECT_LT(s.spec_accepted, s.spec_drafted);
    if (!pipeline) {
      EXPECT_EQ(s.rows, p.rows + s.spec_drafted - s.spec_accepted);
      EXPECT_LT(s.steps, p.steps);
    }
    RecordProperty(pipeline ? "accepted_pipelined" : "accepted", std::to_string(s.spec_accepted));
    RecordProperty(pipeline ? "drafted_pipelined" : "drafted", std::to_string(s.spec_drafted));
    SpecOptions budgeted_lookup = lookup;
    budgeted_lookup.adaptive = true;
    ModelEngine adaptive(path, 1024, 16, std::nullopt, pipeline, 1, 0, budgeted_lookup);
    const std::vector<Outcome> budgeted = run_prompts(adaptive, kMaxTokens);
    for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(budgeted[i].tokens, want[i].tokens) << kPrompts[i];
    const EngineStatsSnapshot b = adaptive.engine().stats();
    EXPECT_GT(b.spec_drafted + b.spec_withheld, 0);
    RecordProperty(pipeline ? "withheld_pipelined" : "withheld", std::to_string(b.spec_withheld));
  }
}

TEST(EngineOnStories, SixteenPromptsGiveTheSameTokensThroughABigPoolASwappingPoolAndARecomputingPool) {
  MET_REQUIRE_SHARED(path, "models/stories260K.gguf");
  ModelEngine big(path, 512, 16, std::nullopt);
  const std::vector<Outcome> want = run_prompts(big);
  EXPECT_EQ(big.engine().stats().preemptions_swap + big.engine().stats().preemptions_recompute, 0);

  testing::TempDir spill;
  ModelEngine swap(path, 14, 16, spill.path());
  const std::vector<Outcome> swapped = run_prompts(swap);
  EXPECT_GT(swap.engine().stats().preemptions_swap, 0);
  EXPECT_TRUE(std::filesystem::is_empty(spill.path()));

  ModelEngine recompute(path, 14, 16, std::nullopt);
  const std::vector<Outcome> recomputed = run_prompts(recompute);
  EXPECT_GT(recompute.engine().stats().preemptions_recompute, 0);

  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_TRUE(want[i].finish.has_value());
    EXPECT_FALSE(want[i].text.empty());
    EXPECT_EQ(swapped[i].tokens, want[i].tokens) << kPrompts[i];
    EXPECT_EQ(recomputed[i].tokens, want[i].tokens) << kPrompts[i];
    EXPECT_EQ(swapped[i].text, want[i].text);
    EXPECT_EQ(recomputed[i].text, want[i].text);
  }
}

TEST(EngineOnStories, ThePipelinedLaneGivesTheSynchronousTokensInABigAndATightPool) {
  MET_REQUIRE_SHARED(path, "models/stories260K.gguf");
  for (int32_t blocks : {512, 14}) {
    ModelEngine off(path, blocks, 16, std::nullopt, /*pipeline=*/false);
    const std::vector<Outcome> want = run_prompts(off);
    ModelEngine on(path, blocks, 16, std::nullopt, /*pipeline=*/true);
    const std::vector<Outcome> got = run_prompts(on);
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got[i].tokens, want[i].tokens) << blocks << " blocks: " << kPrompts[i];
      EXPECT_EQ(got[i].finish->finish_reason, want[i].finish->finish_reason);
    }
  }
}

TEST(EngineOnStories, GreedyFromBosTellsTheStoryOfLily) {
  MET_REQUIRE_SHARED(path, "models/stories260K.gguf");
  ModelEngine m(path, 64, 4, std::nullopt);
  EngineRequest r;
  r.prompt = m.tokenizer().encode("", EncodeOptions{.add_special = true});
  r.max_tokens = 30;
  Result<RequestHandle> h = m.engine().submit(std::move(r));
  ASSERT_TRUE(h.ok());
  Outcome o = testing::collect_stream(*h);
  EXPECT_EQ(o.text.rfind("Once upon a time, there was a little girl named Lily", 0), 0u) << o.text;
}

struct SoakCase {
  EngineRequest request;
  int cancel_after = -1;   // deltas before the client cancels
  bool has_deadline = false;
};

TEST(EngineOnStories, SoakOfTwoHundredRequestsEndsEveryOneWithTheRightFrameAndLeaksNothing) {
  MET_REQUIRE_SHARED(path, "models/stories260K.gguf");
  std::mt19937 rng(1234);
  const char* stops[] = {".", " the", "Lily", ","};
  testing::TempDir spill;
  ModelEngine m(path, 24, 16, spill.path());
  std::vector<SoakCase> cases;
  for (int i = 0; i < 200; ++i) {
    SoakCase c;
    const int len = 1 + static_cast<int>(rng() % 120);
    c.request.prompt.push_back(1);  // BOS
    for (int k = 1; k < len; ++k) c.request.prompt.push_back(static_cast<TokenId>(3 + rng() % 500));
    c.request.max_tokens = 1 + static_cast<int>(rng() % 64);
    if (rng() % 3 == 0) c.request.stop_strings.push_back(stops[rng() % 4]);
    if (rng() % 10 == 0) c.cancel_after = 1 + static_cast<int>(rng() % 5);
    if (rng() % 10 == 0) {
      c.request.timeout = std::chrono::milliseconds(1 + rng() % 30);
      c.has_deadline = true;
    }
    cases.push_back(std::move(c));
  }
  // The reference: each request alone, no cancellation, no deadline.
  std::vector<Outcome> solo;
  {
    ModelEngine ref(path, 64, 1, std::nullopt);
    for (const SoakCase& c : cases) {
      EngineRequest r = c.request;
      r.timeout.reset();
      Result<RequestHandle> h = ref.engine().submit(std::move(r));
      ASSERT_TRUE(h.ok()) << h.status().message();
      solo.push_back(testing::collect_stream(*h));
    }
    ref.engine().drain();
  }
  std::vector<Outcome> got(cases.size());
  std::vector<std::thread> clients;
  for (int t = 0; t < 8; ++t) {
    clients.emplace_back([&, t] {
      for (size_t i = static_cast<size_t>(t); i < cases.size(); i += 8) {
        Result<RequestHandle> h = m.engine().submit(cases[i].request);
        ASSERT_TRUE(h.ok()) << h.status().message();
        got[i] = testing::collect_stream(*h, cases[i].cancel_after);
      }
    });
  }
  for (std::thread& c : clients) c.join();
  m.engine().drain();
  EXPECT_EQ(m.engine().kv_blocks_in_use(), 0);
  EXPECT_TRUE(std::filesystem::is_empty(spill.path()));
  int num_full = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Outcome& o = got[i];
    ASSERT_EQ(o.num_terminal, 1) << "request " << i;
    if (o.error) {
      EXPECT_GE(cases[i].cancel_after, 0) << "request " << i << " failed: " << *o.error;
      continue;
    }
    const std::string& reason = o.finish->finish_reason;
    if (reason == "timeout") {
      EXPECT_TRUE(cases[i].has_deadline) << "request " << i;
      EXPECT_EQ(o.tokens, std::vector<TokenId>(solo[i].tokens.begin(), solo[i].tokens.begin() +
                                               static_cast<std::ptrdiff_t>(o.tokens.size())));
      continue;
    }
    EXPECT_TRUE(reason == "stop" || reason == "length") << reason;
    EXPECT_EQ(o.tokens, solo[i].tokens) << "request " << i;
    EXPECT_EQ(o.text, solo[i].text) << "request " << i;
    EXPECT_EQ(reason, solo[i].finish->finish_reason) << "request " << i;
    EXPECT_LE(static_cast<int>(o.tokens.size()), cases[i].request.max_tokens);
    for (const std::string& s : cases[i].request.stop_strings) EXPECT_EQ(o.text.find(s), std::string::npos);
    ++num_full;
  }
  EXPECT_GT(num_full, 150);
  const EngineStatsSnapshot s = m.engine().stats();
  EXPECT_GT(s.preemptions_swap, 0);
}

}  // namespace
}  // namespace met
