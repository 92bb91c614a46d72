// EngineStats. Tested by tests/engine/engine_test.cc.
#include "engine/engine_stats.h"

namespace met {
namespace {

void add(std::atomic<double>& a, double v) {
  double cur = a.load(std::memory_order_relaxed);
  while (!a.compare_exchange_weak(cur, cur + v, std::memory_order_relaxed)) {
  }
}

}  // namespace

void EngineStats::request_finished(const RequestTiming& t) {
  requests_finished_.fetch_add(1, std::memory_order_relaxed);
  prompt_tokens_.fetch_add(t.prompt_tokens, std::memory_order_relaxed);
  output_tokens_.fetch_add(t.output_tokens, std::memory_order_relaxed);
  cached_prompt_tokens_.fetch_add(t.cached_prompt_tokens, std::memory_order_relaxed);
  add(ttft_ms_sum_, t.ttft_ms);
  add(decode_ms_sum_, t.decode_ms);
}

void EngineStats::preempted(PreemptKind kind) {
  switch (kind) {
    case PreemptKind::kSwap: preemptions_swap_.fetch_add(1, std::memory_order_relaxed); break;
    case PreemptKind::kRecompute: preemptions_recompute_.fetch_add(1, std::memory_order_relaxed); break;
  }
}

void EngineStats::cache_queried(int64_t query_tokens, int64_t hit_tokens) {
  cache_queries_.fetch_add(1, std::memory_order_relaxed);
  cache_query_tokens_.fetch_add(query_tokens, std::memory_order_relaxed);
  cache_hit_tokens_.fetch_add(hit_tokens, std::memory_order_relaxed);
}

void EngineStats::step_done(int32_t num_rows, int32_t num_blocks_in_use) {
  steps_.fetch_add(1, std::memory_order_relaxed);
  rows_.fetch_add(num_rows, std::memory_order_relaxed);
  blocks_in_use_.store(num_blocks_in_use, std::memory_order_relaxed);
}

EngineStatsSnapshot EngineStats::snapshot() const {
  EngineStatsSnapshot s;
  s.requests_finished = requests_finished_.load(std::memory_order_relaxed);
  s.requests_failed = requests_failed_.load(std::memory_order_relaxed);
  s.prompt_tokens = prompt_tokens_.load(std::memory_order_relaxed);
  s.output_tokens = output_tokens_.load(std::memory_order_relaxed);
  s.cached_prompt_tokens = cached_prompt_tokens_.load(std::memory_order_relaxed);
  s.preemptions_swap = preemptions_swap_.load(std::memory_order_relaxed);
  s.preemptions_recompute = preemptions_recompute_.load(std::memory_order_relaxed);
  s.cache_queries = cache_queries_.load(std::memory_order_relaxed);
  s.cache_query_tokens = cache_query_tokens_.load(std::memory_order_relaxed);
  s.cache_hit_tokens = cache_hit_tokens_.load(std::memory_order_relaxed);
  s.steps = steps_.load(std::memory_order_relaxed);
  s.rows = rows_.load(std::memory_order_relaxed);
  s.blocks_in_use = blocks_in_use_.load(std::memory_order_relaxed);
  s.ttft_ms_sum = ttft_ms_sum_.load(std::memory_order_relaxed);
  s.decode_ms_sum = decode_ms_sum_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace met
