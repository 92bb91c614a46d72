// Embedding requests (EngineRequest::embed) through the scheduler with a
// FakeDevice whose hidden states are a known function of the KV it reads
// back (testing/fake_device.h): pooling over prompt chunks, sharing steps
// with generation, the prefix cache, and non-causal (encoder) models.
#include <gtest/gtest.h>

#include <numeric>

#include "scheduler/scheduler.h"
#include "scheduler_fixture.h"

namespace met {
namespace {

using testing::greedy_request;
using testing::make_prompt;
using testing::SchedFixture;
using testing::SchedFixtureOptions;

EngineRequest embed_request(std::vector<TokenId> prompt, Pooling pooling) {
  EngineRequest r;
  r.prompt = std::move(prompt);
  r.max_tokens = 0;
  r.embed = pooling;
  return r;
}

// The FakeDevice's hidden state of the row at `pos` of `prompt`: (token,
// position, the tokens' sum up to `last`, 1).
std::vector<float> fake_hidden(const std::vector<TokenId>& prompt, int32_t pos, int32_t last) {
  const float sum = std::accumulate(prompt.begin(), prompt.begin() + last + 1, 0.0f);
  return {static_cast<float>(prompt[static_cast<size_t>(pos)]), static_cast<float>(pos), sum, 1.0f};
}

// The mean of every row's state (a causal model: row p reads [0, p]).
std::vector<float> fake_mean(const std::vector<TokenId>& prompt, bool causal) {
  std::vector<float> mean(testing::kFakeHiddenSize, 0.0f);
  const auto n = static_cast<int32_t>(prompt.size());
  for (int32_t p = 0; p < n; ++p) {
    const std::vector<float> h = fake_hidden(prompt, p, causal ? p : n - 1);
    for (size_t i = 0; i < mean.size(); ++i) mean[i] += h[i] / static_cast<float>(n);
  }
  return mean;
}

SchedFixtureOptions chunked(int32_t max_batch_tokens) {
  SchedFixtureOptions o;
  o.sched.max_batch_tokens = max_batch_tokens;
  o.sched.max_seqs = 8;
  return o;
}

void expect_near(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-3f * (1.0f + std::abs(want[i]))) << i;
}

TEST(SchedulerEmbedding, MeanPoolingOverPromptChunksIsTheMeanOfEveryRow) {
  SchedFixture f(chunked(16));
  f.device->keep_plans(true);
  const std::vector<TokenId> prompt = make_prompt(40, 3);
  const uint64_t id = f.submit(embed_request(prompt, Pooling::kMean));
  f.run();
  const auto& r = f.req.at(id);
  ASSERT_EQ(r.finishes.size(), 1u) << (r.errors.empty() ? "" : r.errors[0]);
  EXPECT_GE(f.device->plans().size(), 3u) << "40 tokens in chunks of 16";
  expect_near(r.finishes[0].embedding, fake_mean(prompt, true));
  EXPECT_TRUE(r.tokens.empty()) << "nothing is generated";
  EXPECT_EQ(r.finishes[0].finish_reason, "stop");
  EXPECT_EQ(r.finishes[0].usage.prompt_tokens, 40);
  EXPECT_EQ(r.finishes[0].usage.completion_tokens, 0);
  EXPECT_TRUE(f.pool_is_full());
}

TEST(SchedulerEmbedding, LastAndClsPoolingGiveTheLastAndFirstRowsStates) {
  SchedFixture f(chunked(16));
  const std::vector<TokenId> prompt = make_prompt(37, 5);
  const uint64_t last = f.submit(embed_request(prompt, Pooling::kLast));
  const uint64_t cls = f.submit(embed_request(prompt, Pooling::kCls));
  f.run();
  ASSERT_EQ(f.req.at(last).finishes.size(), 1u);
  ASSERT_EQ(f.req.at(cls).finishes.size(), 1u);
  expect_near(f.req.at(last).finishes[0].embedding, fake_hidden(prompt, 36, 36));
  expect_near(f.req.at(cls).finishes[0].embedding, fake_hidden(prompt, 0, 0));
  EXPECT_TRUE(f.pool_is_full());
}

TEST(SchedulerEmbedding, EmbeddingsShareStepsWithGenerationWithoutChangingIt) {
  SchedFixture alone(chunked(64));
  const std::vector<TokenId> gen_prompt = make_prompt(20, 1);
  const uint64_t solo = alone.submit(greedy_request(gen_prompt, 10));
  alone.run();

  SchedFixture f(chunked(64));
  f.device->keep_plans(true);
  const uint64_t gen = f.submit(greedy_request(gen_prompt, 10));
  const std::vector<TokenId> prompt = make_prompt(30, 9);
  const uint64_t emb = f.submit(embed_request(prompt, Pooling::kMean));
  f.run();
  EXPECT_EQ(f.req.at(gen).tokens, alone.req.at(solo).tokens);
  ASSERT_EQ(f.req.at(emb).finishes.size(), 1u);
  expect_near(f.req.at(emb).finishes[0].embedding, fake_mean(prompt, true));
  ASSERT_FALSE(f.device->plans().empty());
  EXPECT_EQ(f.device->plans()[0].seqs.size(), 2u) << "one step runs both";
  EXPECT_TRUE(f.pool_is_full());
}

TEST(SchedulerEmbedding, MeanPoolingNeverStandsACachedPrefixInForItsRows) {
  SchedFixture f(chunked(64));
  const std::vector<TokenId> prompt = make_prompt(50, 2);
  const uint64_t gen = f.submit(greedy_request(prompt, 2));  // leaves the prompt's blocks cached
  f.run();
  const uint64_t mean = f.submit(embed_request(prompt, Pooling::kMean));
  const uint64_t last = f.submit(embed_request(prompt, Pooling::kLast));
  f.run();
  ASSERT_EQ(f.req.at(gen).finishes.size(), 1u);
  ASSERT_EQ(f.req.at(mean).finishes.size(), 1u);
  ASSERT_EQ(f.req.at(last).finishes.size(), 1u);
  EXPECT_EQ(f.req.at(mean).finishes[0].usage.cached_prompt_tokens, 0);
  expect_near(f.req.at(mean).finishes[0].embedding, fake_mean(prompt, true));
  EXPECT_GT(f.req.at(last).finishes[0].usage.cached_prompt_tokens, 0) << "the last row alone needs running";
  expect_near(f.req.at(last).finishes[0].embedding, fake_hidden(prompt, 49, 49));
}

TEST(SchedulerEmbedding, ANonCausalModelRunsEachInputWholeAndCachesNothing) {
  SchedFixtureOptions o = chunked(64);
  o.device.causal = false;
  o.device.has_head = false;
  SchedFixture f(o);
  f.device->keep_plans(true);
  const std::vector<TokenId> a = make_prompt(40, 4), b = make_prompt(40, 6);
  const uint64_t ia = f.submit(embed_request(a, Pooling::kMean));
  const uint64_t ib = f.submit(embed_request(b, Pooling::kCls));
  f.run();
  ASSERT_EQ(f.req.at(ia).finishes.size(), 1u) << (f.req.at(ia).errors.empty() ? "" : f.req.at(ia).errors[0]);
  ASSERT_EQ(f.req.at(ib).finishes.size(), 1u);
  expect_near(f.req.at(ia).finishes[0].embedding, fake_mean(a, false));
  expect_near(f.req.at(ib).finishes[0].embedding, fake_hidden(b, 0, 39));
  for (const StepPlan& p : f.device->plans()) {
    for (const StepSeq& s : p.seqs) {
      EXPECT_EQ(s.num_cached, 0);
      EXPECT_EQ(s.num_rows, 40) << "an input is never cut into chunks";
    }
  }
  EXPECT_EQ(f.device->plans().size(), 2u) << "80 tokens do not fit one step of 64";
  EXPECT_TRUE(f.pool_is_full());
  EXPECT_EQ(f.kv->num_unkeyed_free_blocks(), f.kv->num_blocks()) << "no block was published to the prefix cache";
}

TEST(SchedulerEmbedding, AnEmbeddingPastItsDeadlineGetsAnErrorNotAVector) {
  SchedFixture f(chunked(16));
  EngineRequest r = embed_request(make_prompt(100, 1), Pooling::kMean);
  r.timeout = std::chrono::milliseconds(5);
  const uint64_t id = f.submit(std::move(r));
  f.sched->tick();
  f.clock.advance(std::chrono::milliseconds(10));
  f.run();
  EXPECT_TRUE(f.req.at(id).finishes.empty());
  ASSERT_EQ(f.req.at(id).errors.size(), 1u);
  EXPECT_NE(f.req.at(id).errors[0].find("not embedded"), std::string::npos) << f.req.at(id).errors[0];
  EXPECT_TRUE(f.pool_is_full());
}

}  // namespace
}  // namespace met
