// EngineStats. Tested by tests/server/health_test.cc and tests/engine/engine_test.cc.
#include "engine/engine_stats.h"

#include <chrono>

namespace met {
namespace {

void add(std::atomic<double>& a, double v) {
  double cur = a.load(std::memory_order_relaxed);
  while (!a.compare_exchange_weak(cur, cur + v, std::memory_order_relaxed)) {
  }
}

Duration::rep ticks(TimePoint t) { return t.time_since_epoch().count(); }

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

void EngineStats::step_done(const StepRecord& step) {
  steps_.fetch_add(1, std::memory_order_relaxed);
  rows_.fetch_add(step.num_rows, std::memory_order_relaxed);
  prefill_tokens_.fetch_add(step.prefill_tokens, std::memory_order_relaxed);
  decode_tokens_.fetch_add(step.decode_tokens, std::memory_order_relaxed);
  device_busy_ns_.fetch_add(step.device_busy_ns, std::memory_order_relaxed);
  blocks_in_use_.store(step.num_blocks_in_use, std::memory_order_relaxed);
  last_step_at_.store(ticks(clock_.now()), std::memory_order_relaxed);
}

void EngineStats::spilled(int64_t bytes, Duration took) {
  spills_.fetch_add(1, std::memory_order_relaxed);
  spill_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  add(spill_ms_sum_, std::chrono::duration<double, std::milli>(took).count());
}

void EngineStats::restored(int64_t bytes, Duration took) {
  restores_.fetch_add(1, std::memory_order_relaxed);
  restore_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  add(restore_ms_sum_, std::chrono::duration<double, std::milli>(took).count());
}

void EngineStats::speculated(int32_t drafted, int32_t accepted) {
  spec_drafted_.fetch_add(drafted, std::memory_order_relaxed);
  spec_accepted_.fetch_add(accepted, std::memory_order_relaxed);
}

void EngineStats::drafts_withheld(int32_t n) { spec_withheld_.fetch_add(n, std::memory_order_relaxed); }

void EngineStats::publish_load(const SchedulerCounts& counts, bool has_work, const PoolUse& use) {
  state_slots_in_use_.store(use.state_slots, std::memory_order_relaxed);
  state_snapshots_cached_.store(use.state_snapshots, std::memory_order_relaxed);
  num_running_.store(static_cast<int64_t>(counts.num_active), std::memory_order_relaxed);
  num_waiting_.store(static_cast<int64_t>(counts.num_waiting), std::memory_order_relaxed);
  num_swapped_.store(static_cast<int64_t>(counts.num_swapped), std::memory_order_relaxed);
  blocks_in_use_.store(use.blocks, std::memory_order_relaxed);
  // Only the engine thread writes has_work_, so this read-then-write is safe.
  if (has_work && !has_work_.load(std::memory_order_relaxed)) {
    busy_since_.store(ticks(clock_.now()), std::memory_order_relaxed);
  }
  has_work_.store(has_work, std::memory_order_relaxed);
}

EngineStatsSnapshot EngineStats::snapshot() const {
  auto time_of = [](const std::atomic<Duration::rep>& a) -> std::optional<TimePoint> {
    const Duration::rep v = a.load(std::memory_order_relaxed);
    if (v == kNever) return std::nullopt;
    return TimePoint(Duration(v));
  };
  EngineStatsSnapshot s;
  s.requests_finished = requests_finished_.load(std::memory_order_relaxed);
  s.requests_failed = requests_failed_.load(std::memory_order_relaxed);
  s.slow_clients_cut = slow_clients_cut_.load(std::memory_order_relaxed);
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
  s.prefill_tokens = prefill_tokens_.load(std::memory_order_relaxed);
  s.decode_tokens = decode_tokens_.load(std::memory_order_relaxed);
  s.device_busy_ns = device_busy_ns_.load(std::memory_order_relaxed);
  s.spills = spills_.load(std::memory_order_relaxed);
  s.spill_bytes = spill_bytes_.load(std::memory_order_relaxed);
  s.spill_ms_sum = spill_ms_sum_.load(std::memory_order_relaxed);
  s.restores = restores_.load(std::memory_order_relaxed);
  s.restore_bytes = restore_bytes_.load(std::memory_order_relaxed);
  s.restore_ms_sum = restore_ms_sum_.load(std::memory_order_relaxed);
  s.spec_drafted = spec_drafted_.load(std::memory_order_relaxed);
  s.spec_accepted = spec_accepted_.load(std::memory_order_relaxed);
  s.spec_withheld = spec_withheld_.load(std::memory_order_relaxed);
  s.blocks_in_use = blocks_in_use_.load(std::memory_order_relaxed);
  s.blocks_total = blocks_total_.load(std::memory_order_relaxed);
  s.state_slots_in_use = state_slots_in_use_.load(std::memory_order_relaxed);
  s.state_slots_total = state_slots_total_.load(std::memory_order_relaxed);
  s.state_snapshots_cached = state_snapshots_cached_.load(std::memory_order_relaxed);
  s.state_snapshots_total = state_snapshots_total_.load(std::memory_order_relaxed);
  s.num_running = num_running_.load(std::memory_order_relaxed);
  s.num_waiting = num_waiting_.load(std::memory_order_relaxed);
  s.num_swapped = num_swapped_.load(std::memory_order_relaxed);
  s.has_work = has_work_.load(std::memory_order_relaxed);
  s.last_step_at = time_of(last_step_at_);
  s.busy_since = time_of(busy_since_);
  s.taken_at = clock_.now();
  s.ttft_ms_sum = ttft_ms_sum_.load(std::memory_order_relaxed);
  s.decode_ms_sum = decode_ms_sum_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace met
