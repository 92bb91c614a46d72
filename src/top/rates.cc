// compute_rates and History (rates.h).
// Threading: pure. Tested by tests/top/rates_test.cc.
#include "top/rates.h"

namespace met::top {

Rates compute_rates(const Snapshot& prev, const Snapshot& cur) {
  Rates r;
  const int64_t wall_ms = cur.now_ms - prev.now_ms;
  if (wall_ms <= 0) return r;
  const EngineCounters& a = prev.engine;
  const EngineCounters& b = cur.engine;
  const bool restarted = b.prompt_tokens < a.prompt_tokens || b.output_tokens < a.output_tokens ||
                         b.device_busy_ms < a.device_busy_ms || b.cache_query_tokens < a.cache_query_tokens;
  if (restarted) return r;
  const double seconds = static_cast<double>(wall_ms) / 1000.0;
  r.prompt_tokens_per_s = static_cast<double>(b.prompt_tokens - a.prompt_tokens) / seconds;
  r.output_tokens_per_s = static_cast<double>(b.output_tokens - a.output_tokens) / seconds;
  const double busy = (b.device_busy_ms - a.device_busy_ms) / static_cast<double>(wall_ms);
  r.device_busy_share = busy > 1.0 ? 1.0 : busy;
  const int64_t queried = b.cache_query_tokens - a.cache_query_tokens;
  if (queried > 0) {
    r.cache_hit_rate = static_cast<double>(b.cache_hit_tokens - a.cache_hit_tokens) / static_cast<double>(queried);
  }
  return r;
}

std::optional<double> kv_usage(const EngineCounters& engine) {
  if (engine.kv_blocks_total <= 0) return std::nullopt;
  return static_cast<double>(engine.kv_blocks_in_use) / static_cast<double>(engine.kv_blocks_total);
}

Sample make_sample(const Snapshot& cur, const Rates& rates) {
  Sample s;
  s.running = static_cast<double>(cur.engine.running);
  s.waiting = static_cast<double>(cur.engine.waiting);
  s.swapped = static_cast<double>(cur.engine.swapped);
  s.kv_usage = kv_usage(cur.engine).value_or(0.0);
  s.cache_hit_rate = rates.cache_hit_rate.value_or(0.0);
  s.device_busy_share = rates.device_busy_share.value_or(0.0);
  s.prompt_tokens_per_s = rates.prompt_tokens_per_s.value_or(0.0);
  s.output_tokens_per_s = rates.output_tokens_per_s.value_or(0.0);
  return s;
}

void History::add(const Sample& s) {
  samples_.push_back(s);
  while (samples_.size() > capacity_) samples_.pop_front();
}

}  // namespace met::top
