// The engine on a real model (stories260K) with sampled and logprob
// requests: a seeded request gives the same tokens alone, inside a batch,
// and with the pipelined lane on or off; logprobs are the model's
// log-softmax (checked against the float64 reference logits of the shared
// data) and agree with the chosen tokens.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "model_engine.h"
#include "testing/collected_stream.h"
#include "testing/shared_data.h"

namespace met {
namespace {

using testing::CollectedStream;
using testing::ModelEngine;

const char* kSamplingPrompts[8] = {"Once upon a time", "The little dog", "Lily and Ben went to the park", "Tom had a red ball",
                           "There was a cat",  "Mom said",       "It was a cold day",             "She wanted to"};

EngineRequest sampled_request(const ModelEngine& m, size_t i) {
  EngineRequest r;
  r.prompt = m.tokenizer().encode(kSamplingPrompts[i], EncodeOptions{.add_special = true});
  r.max_tokens = 40;
  r.sampling.temperature = 1.0f;
  r.sampling.top_p = 0.95f;
  r.sampling.repetition_penalty = 1.1f;
  r.sampling.seed = 1000 + i;
  return r;
}

CollectedStream run_one(ModelEngine& m, const EngineRequest& r) {
  Result<RequestHandle> h = m.engine().submit(EngineRequest(r));
  EXPECT_TRUE(h.ok());
  return testing::collect_stream(*h);
}

std::vector<CollectedStream> run_batch(ModelEngine& m) {
  std::vector<RequestHandle> handles;
  for (size_t i = 0; i < std::size(kSamplingPrompts); ++i) handles.push_back(std::move(*m.engine().submit(sampled_request(m, i))));
  std::vector<CollectedStream> out;
  for (RequestHandle& h : handles) out.push_back(testing::collect_stream(h));
  return out;
}

TEST(EngineSampling, ASeededRequestGivesTheSameTokensAloneInABatchAndWithThePipelineOnOrOff) {
  MET_REQUIRE_SHARED(path, "models/stories260K.gguf");
  ModelEngine alone(path, 256, 8, std::nullopt, /*pipeline=*/false);
  std::vector<CollectedStream> want;
  for (size_t i = 0; i < std::size(kSamplingPrompts); ++i) want.push_back(run_one(alone, sampled_request(alone, i)));
  for (bool pipeline : {false, true}) {
    ModelEngine batch(path, 256, 8, std::nullopt, pipeline);
    const std::vector<CollectedStream> got = run_batch(batch);
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got[i].tokens, want[i].tokens) << "pipeline " << pipeline << ": " << kSamplingPrompts[i];
    }
  }
  // A different seed gives a different continuation (the draws are real).
  EngineRequest other = sampled_request(alone, 0);
  other.sampling.seed = 77;
  EXPECT_NE(run_one(alone, other).tokens, want[0].tokens);
}

// The float64 reference logits after [BOS] at position 0.
std::vector<double> reference_logits(const std::string& path) {
  std::ifstream in(path);
  std::vector<double> logits;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    size_t id = 0;
    double value = 0.0;
    fields >> id >> value;
    if (logits.size() <= id) logits.resize(id + 1);
    logits[id] = value;
  }
  return logits;
}

double reference_log_sum_exp(const std::vector<double>& logits) {
  double max = logits[0], sum = 0.0;
  for (double x : logits) max = std::max(max, x);
  for (double x : logits) sum += std::exp(x - max);
  return max + std::log(sum);
}

TEST(EngineSampling, TheFirstTokensLogprobsAreTheLogSoftmaxOfTheReferenceLogits) {
  MET_REQUIRE_SHARED(path, "models/stories260K.gguf");
  MET_REQUIRE_SHARED(logits_path, "models/stories260K.logits-pos0-bos.txt");
  const std::vector<double> logits = reference_logits(logits_path);
  const double lse = reference_log_sum_exp(logits);

  ModelEngine m(path, 64, 4, std::nullopt);
  EngineRequest r;
  r.prompt = m.tokenizer().encode("", EncodeOptions{.add_special = true});
  r.max_tokens = 1;
  r.logprobs = 5;
  const CollectedStream o = run_one(m, r);
  ASSERT_EQ(o.logprobs.size(), 1u);
  const TokenLogprob& lp = o.logprobs[0];
  EXPECT_EQ(lp.token, o.tokens[0]);
  EXPECT_EQ(lp.rank, 1);
  EXPECT_NEAR(lp.logprob, logits[static_cast<size_t>(lp.token)] - lse, 1e-3);
  ASSERT_EQ(lp.top.size(), 5u);
  for (const TopLogprob& t : lp.top) EXPECT_NEAR(t.logprob, logits[static_cast<size_t>(t.token)] - lse, 1e-3);
  for (size_t i = 1; i < lp.top.size(); ++i) EXPECT_GE(lp.top[i - 1].logprob, lp.top[i].logprob);
}

TEST(EngineSampling, EveryOutputTokenCarriesALogprobConsistentWithItsTopList) {
  MET_REQUIRE_SHARED(path, "models/stories260K.gguf");
  for (float temperature : {0.0f, 1.2f}) {
    ModelEngine m(path, 64, 4, std::nullopt);
    EngineRequest r = sampled_request(m, 2);
    r.sampling.temperature = temperature;
    r.sampling.repetition_penalty = 1.0f;  // so greedy is the argmax of the raw logits
    r.logprobs = 3;
    const CollectedStream o = run_one(m, r);
    ASSERT_TRUE(o.finish.has_value());
    const bool ended_by_eos = o.finish->finish_reason == "stop";
    ASSERT_EQ(o.logprobs.size(), o.tokens.size() - (ended_by_eos ? 1 : 0)) << "EOS has no logprob entry";
    for (size_t i = 0; i < o.logprobs.size(); ++i) {
      const TokenLogprob& lp = o.logprobs[i];
      EXPECT_EQ(lp.token, o.tokens[i]);
      EXPECT_LE(lp.logprob, 0.0f);
      ASSERT_EQ(lp.top.size(), 3u);
      EXPECT_GE(lp.top[0].logprob, lp.logprob);
      if (temperature == 0.0f) {
        EXPECT_EQ(lp.rank, 1);
        EXPECT_EQ(lp.top[0].token, lp.token) << "greedy picks the most likely token";
      }
      for (const TopLogprob& t : lp.top) {
        if (t.token == lp.token) {
          EXPECT_FLOAT_EQ(t.logprob, lp.logprob);
        }
      }
    }
  }
}

TEST(EngineSampling, PromptLogprobsOfAGreedyContinuationRankFirstAndStartAtTheReferenceLogits) {
  MET_REQUIRE_SHARED(path, "models/stories260K.gguf");
  MET_REQUIRE_SHARED(logits_path, "models/stories260K.logits-pos0-bos.txt");
  const std::vector<double> logits = reference_logits(logits_path);
  const double lse = reference_log_sum_exp(logits);

  ModelEngine m(path, 64, 4, std::nullopt);
  EngineRequest greedy;
  greedy.prompt = m.tokenizer().encode("", EncodeOptions{.add_special = true});
  greedy.max_tokens = 24;
  const CollectedStream story = run_one(m, greedy);
  std::vector<TokenId> prompt = greedy.prompt;
  prompt.insert(prompt.end(), story.tokens.begin(), story.tokens.end());

  EngineRequest r;
  r.prompt = prompt;
  r.max_tokens = 1;
  r.prompt_logprobs = 2;
  const CollectedStream o = run_one(m, r);
  ASSERT_EQ(o.prompt_logprobs.size(), prompt.size() - 1);
  EXPECT_NEAR(o.prompt_logprobs[0].logprob, logits[static_cast<size_t>(prompt[1])] - lse, 1e-3);
  for (size_t k = 0; k < o.prompt_logprobs.size(); ++k) {
    EXPECT_EQ(o.prompt_logprobs[k].token, prompt[k + 1]);
    EXPECT_EQ(o.prompt_logprobs[k].rank, 1) << "each greedy token was the most likely at " << k + 1;
    EXPECT_EQ(o.prompt_logprobs[k].top.size(), 2u);
  }
}

}  // namespace
}  // namespace met
