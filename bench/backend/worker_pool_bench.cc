// WorkerPool dispatch costs, which a decode step pays hundreds of times (the
// forward pass is one job per step with ~14 barriers per layer):
//   run/threads:<t>: submit + wait of an empty job (a step's launch).
//   barrier/threads:<t>: one ThreadCtx::barrier() inside a job, all threads
//     arriving together (items/s = barriers/s).
// On a shared machine a barrier also pays for any worker that was not
// scheduled; take the best of several runs.
// Run: build/bench/backend/met_worker_pool_bench
#include <benchmark/benchmark.h>

#include "backend/cpu/worker_pool.h"

namespace met::cpu {
namespace {

void run_empty(benchmark::State& state) {
  WorkerPool pool(static_cast<int>(state.range(0)));
  for (auto _ : state) pool.run([](ThreadCtx&) {});
}
BENCHMARK(run_empty)->Name("run")->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime();

void barrier(benchmark::State& state) {
  constexpr int kBarriers = 1000;
  WorkerPool pool(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    pool.run([](ThreadCtx& ctx) {
      for (int i = 0; i < kBarriers; ++i) ctx.barrier();
    });
  }
  state.SetItemsProcessed(state.iterations() * kBarriers);
}
BENCHMARK(barrier)->Name("barrier")->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime();

}  // namespace
}  // namespace met::cpu

BENCHMARK_MAIN();
