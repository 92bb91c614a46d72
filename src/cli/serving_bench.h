// ServingBench: `met bench --concurrency`'s measurement of the engine as a
// server's clients see it (no HTTP). At each concurrency level N, N client
// threads submit requests back to back (random prompts of non-special tokens,
// ignore_eos outputs) until the level's requests are done; each client times
// its own requests: TTFT (submit to the first delta with tokens) and
// inter-token gaps. Then one random prompt is submitted twice, one after the
// other, to time a prefix-cache hit against a cold prefill.
// Invariants: prompts differ between requests (no accidental prefix hits);
// every request is waited for, so the engine is idle when this returns.
// Threading: the caller's thread plus N client threads per level; the engine
// is the only thing they share. Tested by tests/cli/serving_bench_test.cc
// (pure parts) and tests/cli/bench_command_test.cc (the command).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "core/status.h"
#include "engine/cpu_engine.h"
#include "engine/engine.h"
#include "tokenizer/vocab.h"

namespace met {

struct ServingBenchOptions {
  std::vector<int32_t> concurrency;  // one level each
  int32_t requests_per_level = 0;    // 0: twice the level's concurrency
  int32_t prompt_tokens = 512;
  int32_t gen_tokens = 128;
  int32_t cached_prompt_tokens = 2000;  // 0: skip; clipped to the context and the pool
  uint64_t seed = 1;
};

struct LevelFigures {
  int32_t concurrency = 0;
  int32_t num_requests = 0;
  int64_t output_tokens = 0;
  double wall_s = 0;
  double output_tok_s = 0;
  double ttft_ms_p50 = 0;
  double ttft_ms_p99 = 0;
  double itl_ms_p50 = 0;
  double itl_ms_p99 = 0;
  // The share of the level's wall time the device ran no step: the host's
  // time outside the forward (sampling, guards, streaming, scheduling) that
  // the pipelined lane hides.
  double device_idle_share = 0;
};

// Output tokens of the cached prompt's first turn, and new tokens its next
// turn adds after them.
inline constexpr int32_t kNextTurnTokens = 64;

struct CachedPromptFigures {
  int32_t prompt_tokens = 0;
  double cold_ttft_ms = 0;
  double cached_ttft_ms = 0;
  int32_t cached_prompt_tokens = 0;  // of the second submission
  // A conversation's next turn: the prompt, kNextTurnTokens of its output,
  // kNextTurnTokens more; its TTFT and the tokens it found cached.
  int32_t next_turn_prompt_tokens = 0;
  double next_turn_ttft_ms = 0;
  int32_t next_turn_cached_tokens = 0;
};

struct ServingReport {
  std::vector<LevelFigures> levels;
  std::optional<CachedPromptFigures> cached_prompt;
  RequestLimits limits;       // the engine's: context and KV pool
  EngineStatsSnapshot stats;  // after the whole run
};

// The ids a random prompt draws from: normal tokens that do not end a turn.
std::vector<TokenId> plain_token_ids(const Vocab& vocab);
// `num_tokens` ids drawn from `pool` (not empty) by a generator seeded with `seed`.
std::vector<TokenId> random_prompt(const std::vector<TokenId>& pool, int32_t num_tokens, uint64_t seed);
// A greedy request for `max_tokens` tokens that ignores EOS.
EngineRequest bench_request(std::vector<TokenId> prompt, int32_t max_tokens);

// Checks the options alone; messages name the flag and the value.
Status validate_serving_bench(const ServingBenchOptions& o);

// Over `e`'s engine; its device's busy time gives each level's idle share.
Result<ServingReport> run_serving_bench(CpuEngine& e, const ServingBenchOptions& o);

// The p-th percentile (0..100) by nearest rank; 0 for no values.
double percentile(std::vector<double> values, double p);

nlohmann::json serving_report_json(const ServingReport& r);
// The report as a table, one line per level, then the cached-prompt line.
std::string serving_report_table(const ServingReport& r);

}  // namespace met
