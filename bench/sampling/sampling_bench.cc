// Sampling chain: time per row (reported as µs per iteration) for the
// default chain and the full chain at vocab 32,000 and 152,064. Each
// iteration copies a fresh row (the chain processes it in place) and samples
// with a 512-token prompt and a 256-token output history. BM_Logprobs times
// token_logprob with 20 alternatives on the same rows.
#include <random>
#include <vector>

#include <benchmark/benchmark.h>

#include "sampling/logprobs.h"
#include "sampling/sampler.h"

namespace met {
namespace {

std::vector<float> random_row(size_t n) {
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

std::vector<TokenId> random_tokens(size_t n, size_t vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<TokenId> v(n);
  for (TokenId& t : v) t = static_cast<TokenId>(rng() % vocab);
  return v;
}

SamplingParams default_chain() { return {.temperature = 0.8f, .top_k = 40, .top_p = 0.95f, .seed = 1}; }

SamplingParams full_chain() {
  SamplingParams p{.temperature = 0.8f, .top_k = 0, .top_p = 0.95f, .seed = 1};
  p.logit_bias = {{.token = 5, .bias = 1.0f}, {.token = 7, .bias = -100.0f}};
  p.bad_words = {{1, 2}, {3}};
  p.repetition_penalty = 1.1f;
  p.presence_penalty = 0.3f;
  p.frequency_penalty = 0.2f;
  p.dry_multiplier = 0.8f;
  p.lz_penalty = 0.2f;
  p.min_p = 0.05f;
  p.typical_p = 0.95f;
  p.top_n_sigma = 2.0f;
  p.xtc_probability = 0.5f;
  return p;
}

void run(benchmark::State& state, const SamplingParams& params) {
  const auto vocab = static_cast<size_t>(state.range(0));
  const std::vector<float> row = random_row(vocab);
  const std::vector<TokenId> prompt = random_tokens(512, vocab, 2);
  const std::vector<TokenId> output = random_tokens(256, vocab, 3);
  std::vector<float> work(vocab);
  Sampler s(params);
  for (auto _ : state) {
    std::copy(row.begin(), row.end(), work.begin());
    benchmark::DoNotOptimize(s.sample(work, prompt, output));
  }
}

void BM_DefaultChain(benchmark::State& state) { run(state, default_chain()); }
void BM_FullChain(benchmark::State& state) { run(state, full_chain()); }
void BM_FullChainTopK40(benchmark::State& state) {
  SamplingParams p = full_chain();
  p.top_k = 40;
  run(state, p);
}
void BM_CopyOnly(benchmark::State& state) {
  const auto vocab = static_cast<size_t>(state.range(0));
  const std::vector<float> row = random_row(vocab);
  std::vector<float> work(vocab);
  for (auto _ : state) {
    std::copy(row.begin(), row.end(), work.begin());
    benchmark::DoNotOptimize(work.data());
  }
}

// Logprobs of the chosen token with 20 alternatives (what top_logprobs: 20
// costs on top of the chain).
void BM_Logprobs(benchmark::State& state) {
  const auto vocab = static_cast<size_t>(state.range(0));
  const std::vector<float> row = random_row(vocab);
  for (auto _ : state) benchmark::DoNotOptimize(token_logprob(row, 3, kMaxTopLogprobs));
}

BENCHMARK(BM_CopyOnly)->Arg(32000)->Arg(152064)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DefaultChain)->Arg(32000)->Arg(152064)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FullChain)->Arg(32000)->Arg(152064)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FullChainTopK40)->Arg(32000)->Arg(152064)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Logprobs)->Arg(32000)->Arg(152064)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace met

BENCHMARK_MAIN();
