// EngineStats: the engine's counters (EngineTelemetry, the scheduler's `tel`
// port, feeds them) plus the
// load the engine thread publishes after each tick: request, token,
// preemption, step and speculation counters; requests running, waiting and swapped; KV
// blocks and recurrent-state slots in use and in the pool; whether there is work and when the last
// step completed (for /health's stall check). Written by the engine thread,
// read by anyone (bench, /metrics, /health) as a snapshot, to which
// Engine::stats adds a MoE model's expert load from the device.
// Invariants: step and load times come from the engine's Clock; busy_since is
// the time has_work last went from false to true, so a stall is measured from
// max(last step, busy_since), never from a step before an idle spell.
// Threading: counters are relaxed atomics; a snapshot is not one instant.
// Tested by tests/server/health_test.cc (stall inputs, FakeClock) and
// tests/engine/engine_test.cc.
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "core/clock.h"
#include "scheduler/io.h"
#include "scheduler/scheduler.h"

namespace met {

// What the KV side holds after a tick (publish_load).
struct PoolUse {
  int32_t blocks = 0;           // KV blocks held by sequences
  int32_t state_slots = 0;      // recurrent-state slots held by running sequences
  int32_t state_snapshots = 0;  // recurrent-state snapshots the prefix cache keeps
};

struct EngineStatsSnapshot {
  int64_t requests_finished = 0;
  int64_t requests_failed = 0;
  int64_t prompt_tokens = 0;  // of finished requests
  int64_t output_tokens = 0;  // of finished requests
  int64_t cached_prompt_tokens = 0;
  int64_t preemptions_swap = 0;
  int64_t preemptions_recompute = 0;
  int64_t cache_queries = 0;
  int64_t cache_query_tokens = 0;
  int64_t cache_hit_tokens = 0;
  int64_t steps = 0;
  int64_t rows = 0;
  int64_t prefill_tokens = 0;  // step rows that computed prompts
  int64_t decode_tokens = 0;   // step rows that sampled output
  int64_t device_busy_ns = 0;  // the device's time on the steps
  int64_t spills = 0;          // swap-outs written, their bytes and time
  int64_t spill_bytes = 0;
  double spill_ms_sum = 0;
  int64_t restores = 0;        // swap-ins read, their bytes and time
  int64_t restore_bytes = 0;
  double restore_ms_sum = 0;
  int64_t spec_drafted = 0;   // draft tokens verify steps checked
  int64_t spec_accepted = 0;  // of them, committed in place
  int64_t spec_withheld = 0;  // draft tokens proposed and not verified (the draft budget)
  int64_t slow_clients_cut = 0;  // streams cancelled for holding too many unsent bytes too long
  int64_t blocks_in_use = 0;
  int64_t blocks_total = 0;
  int64_t state_slots_in_use = 0;  // models with recurrent layers (0 and 0 otherwise)
  int64_t state_slots_total = 0;
  int64_t state_snapshots_cached = 0;  // hybrid prefix cache: snapshots kept, of the slots for them
  int64_t state_snapshots_total = 0;
  int64_t num_running = 0;
  int64_t num_waiting = 0;  // queued, preempted-for-recompute included
  int64_t num_swapped = 0;
  bool has_work = false;
  std::optional<TimePoint> last_step_at;  // nullopt: no step yet
  std::optional<TimePoint> busy_since;    // nullopt: never had work
  TimePoint taken_at;                     // the engine clock when the snapshot was taken
  double ttft_ms_sum = 0;
  double decode_ms_sum = 0;
  // MoE models: the (token, choice) pairs the forward routed to each expert
  // of each layer, layer-major (layer * num_experts + expert), as the device
  // counts them (Engine::stats adds them); empty for a dense model.
  int32_t num_experts = 0;
  std::vector<int64_t> expert_tokens;
};

class EngineStats final {
 public:
  // Borrows the engine's clock; it outlives this.
  explicit EngineStats(const Clock& clock) : clock_(clock) {}

  void request_finished(const RequestTiming& t);
  void request_failed() { requests_failed_.fetch_add(1, std::memory_order_relaxed); }
  void preempted(PreemptKind kind);
  void cache_queried(int64_t query_tokens, int64_t hit_tokens);
  void step_done(const StepRecord& step);
  void spilled(int64_t bytes, Duration took);
  void restored(int64_t bytes, Duration took);
  void speculated(int32_t drafted, int32_t accepted);
  void drafts_withheld(int32_t n);

  // The engine thread, after draining its inbox and after each tick.
  void publish_load(const SchedulerCounts& counts, bool has_work, const PoolUse& use);
  void slow_clients_cut(int32_t n) { slow_clients_cut_.fetch_add(n, std::memory_order_relaxed); }
  void set_blocks_total(int32_t num_blocks) { blocks_total_.store(num_blocks, std::memory_order_relaxed); }
  void set_state_slots_total(int32_t n) { state_slots_total_.store(n, std::memory_order_relaxed); }
  void set_state_snapshots_total(int32_t n) { state_snapshots_total_.store(n, std::memory_order_relaxed); }

  EngineStatsSnapshot snapshot() const;

 private:
  static constexpr Duration::rep kNever = std::numeric_limits<Duration::rep>::min();

  const Clock& clock_;
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
  std::atomic<int64_t> prefill_tokens_{0};
  std::atomic<int64_t> decode_tokens_{0};
  std::atomic<int64_t> device_busy_ns_{0};
  std::atomic<int64_t> spills_{0};
  std::atomic<int64_t> spill_bytes_{0};
  std::atomic<double> spill_ms_sum_{0};
  std::atomic<int64_t> restores_{0};
  std::atomic<int64_t> restore_bytes_{0};
  std::atomic<double> restore_ms_sum_{0};
  std::atomic<int64_t> spec_drafted_{0};
  std::atomic<int64_t> spec_accepted_{0};
  std::atomic<int64_t> spec_withheld_{0};
  std::atomic<int64_t> slow_clients_cut_{0};
  std::atomic<int64_t> blocks_in_use_{0};
  std::atomic<int64_t> blocks_total_{0};
  std::atomic<int64_t> state_slots_in_use_{0};
  std::atomic<int64_t> state_slots_total_{0};
  std::atomic<int64_t> state_snapshots_cached_{0};
  std::atomic<int64_t> state_snapshots_total_{0};
  std::atomic<int64_t> num_running_{0};
  std::atomic<int64_t> num_waiting_{0};
  std::atomic<int64_t> num_swapped_{0};
  std::atomic<bool> has_work_{false};
  std::atomic<Duration::rep> last_step_at_{kNever};  // time_since_epoch ticks
  std::atomic<Duration::rep> busy_since_{kNever};
  std::atomic<double> ttft_ms_sum_{0};
  std::atomic<double> decode_ms_sum_{0};
};

}  // namespace met
