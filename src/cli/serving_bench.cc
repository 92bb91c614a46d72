// ServingBench. Tested by tests/cli/serving_bench_test.cc and
// tests/cli/bench_command_test.cc.
#include "cli/serving_bench.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <random>
#include <thread>

#include <fmt/format.h>

namespace met {
namespace {

// What one client saw of its requests.
struct ClientSamples {
  std::vector<double> ttft_ms;
  std::vector<double> itl_ms;
  int64_t output_tokens = 0;
  std::vector<TokenId> tokens;  // kept only when keep_tokens
  bool keep_tokens = false;
  std::optional<std::string> error;
};

// Runs one request to its end, adding its TTFT and token gaps to `out`.
// Returns the finish event, or nullopt after setting out.error.
std::optional<FinishEvent> time_request(Engine& engine, const Clock& clock, EngineRequest request,
                                        ClientSamples& out) {
  const TimePoint submitted = clock.now();
  Result<RequestHandle> h = engine.submit(std::move(request));
  if (!h.ok()) {
    out.error = h.status().message();
    return std::nullopt;
  }
  std::optional<TimePoint> last_token;
  StreamEvent ev;
  std::optional<FinishEvent> finish;
  while (h->next(ev)) {
    if (auto* d = std::get_if<DeltaEvent>(&ev)) {
      if (d->tokens.empty()) continue;
      const TimePoint now = clock.now();
      if (out.keep_tokens) out.tokens.insert(out.tokens.end(), d->tokens.begin(), d->tokens.end());
      if (!last_token) {
        out.ttft_ms.push_back(ms_between(submitted, now));
      } else {
        const double gap = ms_between(*last_token, now) / static_cast<double>(d->tokens.size());
        out.itl_ms.insert(out.itl_ms.end(), d->tokens.size(), gap);
      }
      last_token = now;
    } else if (auto* f = std::get_if<FinishEvent>(&ev)) {
      out.output_tokens += f->usage.completion_tokens;
      finish = std::move(*f);
    } else {
      out.error = std::get<ErrorEvent>(ev).message;
    }
  }
  return finish;
}

Result<LevelFigures> run_level(Engine& engine, const Clock& clock, const std::vector<TokenId>& pool,
                               const ServingBenchOptions& o, int32_t concurrency, uint64_t seed) {
  const int32_t num_requests = o.requests_per_level > 0 ? o.requests_per_level : 2 * concurrency;
  std::vector<std::vector<TokenId>> prompts;
  for (int32_t i = 0; i < num_requests; ++i) prompts.push_back(random_prompt(pool, o.prompt_tokens, seed + i));
  std::vector<ClientSamples> clients(static_cast<size_t>(concurrency));
  std::atomic<int32_t> next{0};
  const TimePoint start = clock.now();
  std::vector<std::thread> threads;
  for (ClientSamples& c : clients) {
    threads.emplace_back([&] {
      for (int32_t i = next.fetch_add(1); i < num_requests && !c.error; i = next.fetch_add(1)) {
        time_request(engine, clock, bench_request(std::move(prompts[static_cast<size_t>(i)]), o.gen_tokens), c);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  LevelFigures f;
  f.concurrency = concurrency;
  f.num_requests = num_requests;
  f.wall_s = ms_between(start, clock.now()) / 1e3;
  std::vector<double> ttft;
  std::vector<double> itl;
  for (const ClientSamples& c : clients) {
    if (c.error) return internal_error("concurrency {}: a request failed: {}", concurrency, *c.error);
    f.output_tokens += c.output_tokens;
    ttft.insert(ttft.end(), c.ttft_ms.begin(), c.ttft_ms.end());
    itl.insert(itl.end(), c.itl_ms.begin(), c.itl_ms.end());
  }
  f.output_tok_s = f.wall_s > 0 ? static_cast<double>(f.output_tokens) / f.wall_s : 0.0;
  f.ttft_ms_p50 = percentile(ttft, 50);
  f.ttft_ms_p99 = percentile(ttft, 99);
  f.itl_ms_p50 = percentile(itl, 50);
  f.itl_ms_p99 = percentile(itl, 99);
  return f;
}

// One request of the cached-prompt figures, alone: its samples (with its
// tokens when `keep_tokens`) and finish.
struct Pass {
  ClientSamples samples;
  FinishEvent finish;
};

Result<Pass> run_pass(Engine& engine, const Clock& clock, const std::vector<TokenId>& prompt, int32_t max_tokens,
                      bool keep_tokens) {
  Pass p;
  p.samples.keep_tokens = keep_tokens;
  std::optional<FinishEvent> finish = time_request(engine, clock, bench_request(prompt, max_tokens), p.samples);
  if (p.samples.error || !finish || p.samples.ttft_ms.empty()) {
    return internal_error("cached prompt: the request failed: {}", p.samples.error.value_or("no token came back"));
  }
  p.finish = std::move(*finish);
  return p;
}

// The prompt twice (cold, then from the prefix cache); then, when the pool
// and context hold it, a conversation's next turn: the prompt's first turn
// (kNextTurnTokens out), then the prompt, that output and kNextTurnTokens more.
Result<std::optional<CachedPromptFigures>> run_cached_prompt(Engine& engine, const Clock& clock,
                                                             const std::vector<TokenId>& pool,
                                                             const ServingBenchOptions& o, uint64_t seed) {
  const RequestLimits lim = engine.limits();
  int64_t n = o.cached_prompt_tokens;
  if (lim.max_seq_len > 0) n = std::min<int64_t>(n, lim.max_seq_len - 1);  // room for the output token
  n = std::min<int64_t>(n, lim.kv_capacity_tokens() - 1);
  if (n < 1) return std::optional<CachedPromptFigures>();
  const std::vector<TokenId> prompt = random_prompt(pool, static_cast<int32_t>(n), seed);
  CachedPromptFigures f;
  f.prompt_tokens = static_cast<int32_t>(n);
  MET_ASSIGN_OR_RETURN(const Pass cold, run_pass(engine, clock, prompt, 1, false));
  MET_ASSIGN_OR_RETURN(const Pass cached, run_pass(engine, clock, prompt, 1, false));
  f.cold_ttft_ms = cold.samples.ttft_ms.front();
  f.cached_ttft_ms = cached.samples.ttft_ms.front();
  f.cached_prompt_tokens = cached.finish.usage.cached_prompt_tokens;
  const int64_t room = std::min<int64_t>(lim.max_seq_len > 0 ? lim.max_seq_len : std::numeric_limits<int64_t>::max(),
                                         lim.kv_capacity_tokens());
  if (n + 3 * kNextTurnTokens >= room) return std::optional<CachedPromptFigures>(f);
  MET_ASSIGN_OR_RETURN(const Pass first, run_pass(engine, clock, prompt, kNextTurnTokens, true));
  std::vector<TokenId> turn = prompt;
  turn.insert(turn.end(), first.samples.tokens.begin(), first.samples.tokens.end());
  const std::vector<TokenId> more = random_prompt(pool, kNextTurnTokens, seed + 1);
  turn.insert(turn.end(), more.begin(), more.end());
  MET_ASSIGN_OR_RETURN(const Pass next, run_pass(engine, clock, turn, 1, false));
  f.next_turn_prompt_tokens = static_cast<int32_t>(turn.size());
  f.next_turn_ttft_ms = next.samples.ttft_ms.front();
  f.next_turn_cached_tokens = next.finish.usage.cached_prompt_tokens;
  return std::optional<CachedPromptFigures>(f);
}

}  // namespace

std::vector<TokenId> plain_token_ids(const Vocab& vocab) {
  std::vector<TokenId> ids;
  for (size_t i = 0; i < vocab.size(); ++i) {
    const auto id = static_cast<TokenId>(i);
    if (vocab.token(id).kind == TokenKind::kNormal && !vocab.is_eog(id)) ids.push_back(id);
  }
  return ids;
}

std::vector<TokenId> random_prompt(const std::vector<TokenId>& pool, int32_t num_tokens, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, pool.size() - 1);
  std::vector<TokenId> prompt(static_cast<size_t>(num_tokens));
  for (TokenId& t : prompt) t = pool[pick(rng)];
  return prompt;
}

EngineRequest bench_request(std::vector<TokenId> prompt, int32_t max_tokens) {
  EngineRequest r;
  r.prompt = std::move(prompt);
  r.sampling.temperature = 0.0f;
  r.max_tokens = max_tokens;
  r.ignore_eos = true;
  return r;
}

Status validate_serving_bench(const ServingBenchOptions& o) {
  for (int32_t c : o.concurrency) {
    if (c < 1) return invalid_argument("--concurrency {} must be >= 1", c);
  }
  if (o.requests_per_level < 0) {
    return invalid_argument("--requests-per-level {} must be >= 1 (0: twice the concurrency)", o.requests_per_level);
  }
  if (o.cached_prompt_tokens < 0) {
    return invalid_argument("--cached-prompt-tokens {} must be >= 0 (0: skip)", o.cached_prompt_tokens);
  }
  return ok_status();
}

Result<ServingReport> run_serving_bench(CpuEngine& e, const ServingBenchOptions& o) {
  MET_RETURN_IF_ERROR(validate_serving_bench(o));
  Engine& engine = e.engine();
  const Clock& clock = e.clock();
  const std::vector<TokenId> pool = plain_token_ids(e.tokenizer().vocab());
  if (pool.empty()) return invalid_argument("the vocabulary has no normal token to build prompts from");
  ServingReport r;
  r.limits = engine.limits();
  uint64_t seed = o.seed;
  for (int32_t c : o.concurrency) {
    const int64_t busy0 = e.device_busy_ns();
    MET_ASSIGN_OR_RETURN(LevelFigures f, run_level(engine, clock, pool, o, c, seed));
    const double busy_s = static_cast<double>(e.device_busy_ns() - busy0) / 1e9;
    f.device_idle_share = f.wall_s > 0 ? std::clamp(1.0 - busy_s / f.wall_s, 0.0, 1.0) : 0.0;
    seed += static_cast<uint64_t>(f.num_requests);
    r.levels.push_back(f);
  }
  if (o.cached_prompt_tokens > 0) {
    MET_ASSIGN_OR_RETURN(r.cached_prompt, run_cached_prompt(engine, clock, pool, o, seed));
  }
  r.stats = engine.stats();
  return r;
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const double rank = std::ceil(p / 100.0 * static_cast<double>(values.size()));
  const size_t idx = static_cast<size_t>(std::clamp(rank, 1.0, static_cast<double>(values.size()))) - 1;
  return values[idx];
}

nlohmann::json serving_report_json(const ServingReport& r) {
  nlohmann::json j;
  j["levels"] = nlohmann::json::array();
  for (const LevelFigures& f : r.levels) {
    j["levels"].push_back({{"concurrency", f.concurrency},
                           {"requests", f.num_requests},
                           {"output_tokens", f.output_tokens},
                           {"wall_s", f.wall_s},
                           {"output_tok_s", f.output_tok_s},
                           {"ttft_ms_p50", f.ttft_ms_p50},
                           {"ttft_ms_p99", f.ttft_ms_p99},
                           {"itl_ms_p50", f.itl_ms_p50},
                           {"itl_ms_p99", f.itl_ms_p99},
                           {"device_idle_share", f.device_idle_share}});
  }
  if (r.cached_prompt) {
    const CachedPromptFigures& c = *r.cached_prompt;
    j["cached_prompt"] = {{"prompt_tokens", c.prompt_tokens},
                          {"cold_ttft_ms", c.cold_ttft_ms},
                          {"cached_ttft_ms", c.cached_ttft_ms},
                          {"cached_prompt_tokens", c.cached_prompt_tokens}};
    if (c.next_turn_prompt_tokens > 0) {
      j["cached_prompt"]["next_turn"] = {{"prompt_tokens", c.next_turn_prompt_tokens},
                                         {"ttft_ms", c.next_turn_ttft_ms},
                                         {"cached_prompt_tokens", c.next_turn_cached_tokens}};
    }
  }
  j["preemptions_swap"] = r.stats.preemptions_swap;
  j["preemptions_recompute"] = r.stats.preemptions_recompute;
  j["steps"] = r.stats.steps;
  j["rows"] = r.stats.rows;
  j["spec_drafted"] = r.stats.spec_drafted;
  j["spec_accepted"] = r.stats.spec_accepted;
  j["spec_withheld"] = r.stats.spec_withheld;
  return j;
}

std::string serving_report_table(const ServingReport& r) {
  std::string s = fmt::format("{:>11} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>9}\n", "concurrency", "requests",
                              "out tok/s", "TTFT p50", "TTFT p99", "ITL p50", "ITL p99", "dev idle");
  for (const LevelFigures& f : r.levels) {
    s += fmt::format("{:>11} {:>8} {:>10.1f} {:>8.1f}ms {:>8.1f}ms {:>8.2f}ms {:>8.2f}ms {:>8.1f}%\n", f.concurrency,
                     f.num_requests, f.output_tok_s, f.ttft_ms_p50, f.ttft_ms_p99, f.itl_ms_p50, f.itl_ms_p99,
                     100.0 * f.device_idle_share);
  }
  if (r.cached_prompt) {
    const CachedPromptFigures& c = *r.cached_prompt;
    s += fmt::format("cached prompt {} tokens: cold TTFT {:.1f} ms, cached TTFT {:.1f} ms ({} tokens from the "
                     "prefix cache)\n",
                     c.prompt_tokens, c.cold_ttft_ms, c.cached_ttft_ms, c.cached_prompt_tokens);
    if (c.next_turn_prompt_tokens > 0) {
      s += fmt::format("next turn {} tokens (the prompt, {} out, {} more): TTFT {:.1f} ms ({} tokens from the "
                       "prefix cache)\n",
                       c.next_turn_prompt_tokens, kNextTurnTokens, kNextTurnTokens, c.next_turn_ttft_ms,
                       c.next_turn_cached_tokens);
    }
  }
  s += fmt::format("preemptions: {} swap, {} recompute; {} steps, {:.1f} rows per step\n", r.stats.preemptions_swap,
                   r.stats.preemptions_recompute, r.stats.steps,
                   r.stats.steps > 0 ? static_cast<double>(r.stats.rows) / static_cast<double>(r.stats.steps) : 0.0);
  if (r.stats.spec_drafted > 0 || r.stats.spec_withheld > 0) {
    s += fmt::format("speculation: {} drafts verified, {} accepted ({:.1f}%), {} withheld by the draft budget\n",
                     r.stats.spec_drafted, r.stats.spec_accepted,
                     r.stats.spec_drafted > 0 ? 100.0 * static_cast<double>(r.stats.spec_accepted) /
                                                    static_cast<double>(r.stats.spec_drafted)
                                              : 0.0,
                     r.stats.spec_withheld);
  }
  return s;
}

}  // namespace met
