// EngineStats: the engine's telemetry (the scheduler's `tel` port): request,
// token, preemption and step counters, and the KV blocks in use. Written by
// the engine thread, read by anyone (bench, /metrics) as a snapshot.
// Threading: counters are relaxed atomics; a snapshot is not one instant.
// Tested by tests/engine/engine_test.cc.
#pragma once

#include <atomic>
#include <cstdint>

#include "scheduler/io.h"

namespace met {

struct EngineStatsSnapshot {
  int64_t requests_finished = 0;
  int64_t requests_failed = 0;
  int64_t prompt_tokens = 0;
  int64_t output_tokens = 0;
  int64_t cached_prompt_tokens = 0;
  int64_t preemptions_swap = 0;
  int64_t preemptions_recompute = 0;
  int64_t cache_queries = 0;
  int64_t cache_query_tokens = 0;
  int64_t cache_hit_tokens = 0;
  int64_t steps = 0;
  int64_t rows = 0;
  int64_t blocks_in_use = 0;
  double ttft_ms_sum = 0;
  double decode_ms_sum = 0;
};

class EngineStats final : public TelPort {
 public:
  void request_finished(const RequestTiming& t) override;
  void request_failed() override { requests_failed_.fetch_add(1, std::memory_order_relaxed); }
  void preempted(PreemptKind kind) override;
  void cache_queried(int64_t query_tokens, int64_t hit_tokens) override;
  void step_done(int32_t num_rows, int32_t num_blocks_in_use) override;

  EngineStatsSnapshot snapshot() const;

 private:
  std::atomic<int64_t> requests_finished_{0};
  std::atomic<int64_t> requests_failed_{0};
  std::atomic<int64_t> prompt_tokens_{0};
  std::atomic<int64_t> output_tokens_{0};
  std::atomic<int64_t> cached_prompt_tokens_{0};
  std::atomic<int64_t> preemptions_swap_{0};
  std::atomic<int64_t> preemptions_recompute_{0};
  std::atomic<int64_t> cache_queries_{0};
  std::atomic<int64_t> cache_query_tokens_{0};
  std::atomic<int64_t> cache_hit_tokens_{0};
  std::atomic<int64_t> steps_{0};
  std::atomic<int64_t> rows_{0};
  std::atomic<int64_t> blocks_in_use_{0};
  std::atomic<double> ttft_ms_sum_{0};
  std::atomic<double> decode_ms_sum_{0};
};

}  // namespace met
