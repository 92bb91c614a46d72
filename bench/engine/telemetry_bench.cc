// The engine thread's cost of telemetry for one step: EngineTelemetry's
// step_done (the counters, and a record staged while someone subscribes)
// and the feed's flush (one lock per tick), with 0 or 4 subscribers that
// read everything (as /v1/telemetry's streams do) on another thread. A
// decode step of a medium model takes milliseconds; this is its overhead.
//   met_telemetry_bench --benchmark_filter=Step
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>

#include "core/clock.h"
#include "engine/engine_stats.h"
#include "engine/engine_telemetry.h"
#include "engine/telemetry_feed.h"

namespace met {
namespace {

void BM_StepTelemetry(benchmark::State& state) {
  const auto num_subscribers = static_cast<int>(state.range(0));
  RealClock clock;
  EngineStats stats(clock);
  TelemetryFeed feed;
  EngineTelemetry tel(clock, stats, feed);
  std::atomic<bool> done{false};
  std::vector<std::thread> readers;
  for (int i = 0; i < num_subscribers; ++i) {
    readers.emplace_back([&feed, &done] {
      TelemetryFeed::Subscription sub = feed.subscribe();
      std::vector<TelemetryRecord> records;
      while (!done.load()) {
        records.clear();
        sub.read(records, 4096);
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    });
  }
  while (feed.has_subscribers() != (num_subscribers > 0)) std::this_thread::yield();
  StepRecord step;
  step.num_rows = 64;
  step.decode_tokens = 64;
  step.num_blocks_in_use = 300;
  step.device_busy_ns = 100'000'000;
  for (auto _ : state) {
    tel.step_done(step);
    feed.flush();
  }
  done = true;
  for (std::thread& t : readers) t.join();
}
BENCHMARK(BM_StepTelemetry)->Arg(0)->Arg(4);

}  // namespace
}  // namespace met

BENCHMARK_MAIN();
