// Matmul throughput per weight type and ISA tier this CPU supports, and per
// packed layout (q8_0x16, f16x16, ...: weights packed at load,
// packed_weights.h).
//   decode/<type>/<tier>/<rows>x<cols>[/m:<m>]/threads:<t>: m = 1 (or a
//     batch of 16; or 1, 2, 4 rows against 1024 x 1024 copies, a MoE expert's
//     share of a batch), weights streamed from DRAM: each iteration walks copies
//     of the matrix totalling >= 256 MiB (well past L3), so bytes/s is weight
//     bytes read per second.
//   decode_hot/<type>/<tier>/256x1024: m = 1 on one thread against one matrix
//     that stays in L2: the kernel's arithmetic rate, the DRAM rate's ceiling.
//   prefill/<type>/<tier>/m:<m>/threads:<t>: m = 4, 16 (batched decode), 64
//     or 512 activation rows against a 1024 x 4096 matrix; items/s counts
//     FLOPs (2 m n k).
// Activations are prepared once outside the timed loop. Threads are a
// WorkerPool; one job runs every copy of an iteration, each thread its
// share of the output columns (as the forward pass splits them).
// On a shared machine wall time includes time the workers were not
// scheduled; the *_per_cpu_second counters divide by the workers' own CPU
// time instead (the kernel's cost per core; memory stalls included).
// Run: build/bench/backend/met_matmul_bench [--benchmark_filter=q4_0]
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "backend/cpu/kernels/matmul.h"
#include "backend/cpu/kernels/matmul_dispatch.h"
#include "backend/cpu/kernels/packed_weights.h"
#include "backend/cpu/worker_pool.h"
#include "core/cpu_features.h"
#include "tensor/quantize.h"

namespace met::cpu {
namespace {

constexpr GgmlType kTypes[] = {GgmlType::kF32,  GgmlType::kF16,   GgmlType::kBF16, GgmlType::kQ8_0,
                               GgmlType::kQ4_0, GgmlType::kMXFP4, GgmlType::kQ4_K, GgmlType::kQ5_K,
                               GgmlType::kQ6_K, GgmlType::kQ3_K,  GgmlType::kIQ4_XS, GgmlType::kQ2_K,
                               GgmlType::kIQ4_NL, GgmlType::kQ5_0, GgmlType::kQ4_1, GgmlType::kQ5_1};
constexpr size_t kStreamBytes = size_t{256} << 20;

std::vector<float> gaussian(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(n);
  for (float& v : x) v = dist(rng);
  return x;
}

// `copies` copies of one random rows x cols matrix of `type`, back to back.
struct WeightSet {
  GgmlType type;
  int64_t rows, cols;
  size_t row_bytes, matrix_bytes;
  int copies;
  std::vector<uint8_t> bytes;
  WeightArena arena;                 // packed's bytes, as a model's
  std::vector<PackedMatrix> packed;  // the copies packed, when benchmarking a packed layout
  WeightMatrix row_major(int copy) const {
    return {type, bytes.data() + static_cast<size_t>(copy) * matrix_bytes, rows, cols, row_bytes};
  }
  WeightMatrix matrix(int copy) const {
    return packed.empty() ? row_major(copy) : packed[static_cast<size_t>(copy)].matrix();
  }
  void pack(WeightLayout layout) {
    if (layout == WeightLayout::kRows) return;
    for (int c = 0; c < copies; ++c) packed.push_back(PackedMatrix::pack(row_major(c), layout, arena));
    bytes = {};
  }
};

WeightSet make_weights(GgmlType type, int64_t rows, int64_t cols, size_t min_total_bytes) {
  WeightSet w{type, rows, cols, static_cast<size_t>(*ggml_row_bytes(type, cols)), 0, 1, {}, {}, {}};
  w.matrix_bytes = w.row_bytes * static_cast<size_t>(rows);
  w.copies = static_cast<int>(std::max<size_t>(1, min_total_bytes / w.matrix_bytes));
  w.bytes.resize(w.matrix_bytes * static_cast<size_t>(w.copies));
  const std::vector<float> row = gaussian(static_cast<size_t>(cols), 1);
  for (int64_t n = 0; n < rows; ++n) {
    std::span<uint8_t> dst(w.bytes.data() + static_cast<size_t>(n) * w.row_bytes, w.row_bytes);
    if (!quantize_row(type, row, dst).ok()) std::abort();
  }
  for (int c = 1; c < w.copies; ++c) {
    std::memcpy(w.bytes.data() + static_cast<size_t>(c) * w.matrix_bytes, w.bytes.data(), w.matrix_bytes);
  }
  return w;
}

std::vector<uint8_t> prepared(const MatmulKernels& kernels, GgmlType type, int64_t m, int64_t cols) {
  const std::vector<float> x = gaussian(static_cast<size_t>(m * cols), 2);
  std::vector<uint8_t> act(static_cast<size_t>(m) * activation_row_bytes(type, cols));
  prepare_activations_with(kernels, type, x.data(), cols, cols, 0, m, act.data());
  return act;
}

int64_t thread_cpu_ns() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return int64_t{t.tv_sec} * 1000000000 + t.tv_nsec;
}

// Every copy of the weights against `act`, split by output columns; adds the
// workers' CPU time to `cpu_ns`.
void run_all(WorkerPool& pool, const MatmulKernels& kernels, const WeightSet& w,
             const uint8_t* act, int64_t m, float* y, std::atomic<int64_t>& cpu_ns) {
  pool.run([&](ThreadCtx& ctx) {
    const int64_t start = thread_cpu_ns();
    const auto [begin, end] = ctx.split(w.rows, matmul_column_tile(w.type));
    for (int c = 0; c < w.copies; ++c) matmul_with(kernels, w.matrix(c), act, m, y, w.rows, begin, end);
    cpu_ns.fetch_add(thread_cpu_ns() - start);
  });
}

// total / the workers' CPU seconds.
benchmark::Counter per_cpu_second(double total, const std::atomic<int64_t>& cpu_ns) {
  return benchmark::Counter(total / (1e-9 * static_cast<double>(std::max<int64_t>(1, cpu_ns.load()))));
}

// Weights of `type` in `layout`: `copies` of a random matrix totalling at
// least min_total_bytes.
WeightSet make_weights_in(WeightLayout layout, GgmlType type, int64_t rows, int64_t cols,
                          size_t min_total_bytes) {
  WeightSet w = make_weights(type, rows, cols, min_total_bytes);
  w.pack(layout);
  return w;
}

MatmulKernels tier_kernels(GgmlType type, Isa tier) {
  MatmulKernels k = matmul_kernels_for_isa(type, tier);
  if (k.prepare == nullptr) k.prepare = matmul_kernels_for_isa(type, Isa::kScalar).prepare;
  return k;
}

void decode(benchmark::State& state, WeightLayout layout, GgmlType type, Isa tier, int64_t rows,
            int64_t cols, int64_t m, int threads) {
  const MatmulKernels kernels = tier_kernels(type, tier);
  const WeightSet w = make_weights_in(layout, type, rows, cols, kStreamBytes);
  const std::vector<uint8_t> act = prepared(kernels, type, m, cols);
  std::vector<float> y(static_cast<size_t>(m * rows));
  WorkerPool pool(threads);
  std::atomic<int64_t> cpu_ns{0};
  for (auto _ : state) {
    run_all(pool, kernels, w, act.data(), m, y.data(), cpu_ns);
    benchmark::DoNotOptimize(y.data());
  }
  const auto bytes = static_cast<double>(state.iterations()) * static_cast<double>(w.matrix_bytes) * w.copies;
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["bytes_per_cpu_second"] = per_cpu_second(bytes, cpu_ns);
}

// One row against one copy of a 256 x 1024 matrix (at most 512 KiB, F16)
// read over and over on the calling thread: the weights stay in L2, so this
// is the kernel's arithmetic rate at batch 1, the ceiling the DRAM-bound
// decode cannot pass (a kernel whose rate here is near a core's DRAM stream
// leaves the stream waiting on its arithmetic).
void decode_hot(benchmark::State& state, WeightLayout layout, GgmlType type, Isa tier) {
  constexpr int64_t kRows = 256, kCols = 1024;
  const MatmulKernels kernels = tier_kernels(type, tier);
  const WeightSet w = make_weights_in(layout, type, kRows, kCols, 0);
  const std::vector<uint8_t> act = prepared(kernels, type, 1, kCols);
  std::vector<float> y(static_cast<size_t>(kRows));
  for (auto _ : state) {
    matmul_with(kernels, w.matrix(0), act.data(), 1, y.data(), kRows, 0, kRows);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(w.matrix_bytes));
}

void prefill(benchmark::State& state, WeightLayout layout, GgmlType type, Isa tier, int64_t m,
             int threads) {
  constexpr int64_t kRows = 1024, kCols = 4096;
  const MatmulKernels kernels = tier_kernels(type, tier);
  const WeightSet w = make_weights_in(layout, type, kRows, kCols, 0);
  const std::vector<uint8_t> act = prepared(kernels, type, m, kCols);
  std::vector<float> y(static_cast<size_t>(m * kRows));
  WorkerPool pool(threads);
  std::atomic<int64_t> cpu_ns{0};
  for (auto _ : state) {
    run_all(pool, kernels, w, act.data(), m, y.data(), cpu_ns);
    benchmark::DoNotOptimize(y.data());
  }
  const double flops = static_cast<double>(state.iterations()) * 2.0 * static_cast<double>(m * kRows * kCols);
  state.SetItemsProcessed(static_cast<int64_t>(flops));
  state.counters["flops_per_cpu_second"] = per_cpu_second(flops, cpu_ns);
}

void register_one(WeightLayout layout, GgmlType type, Isa tier, const std::string& name) {
  for (const auto& [rows, cols] : {std::pair<int64_t, int64_t>{1024, 4096}, {4096, 1024}}) {
    for (const int threads : {1, 2}) {
      benchmark::RegisterBenchmark(
          fmt::format("decode/{}/{}x{}/threads:{}", name, rows, cols, threads).c_str(), decode, layout,
          type, tier, rows, cols, int64_t{1}, threads)
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
  for (const int threads : {1, 2}) {
    benchmark::RegisterBenchmark(fmt::format("decode/{}/1024x4096/m:16/threads:{}", name, threads).c_str(),
                                 decode, layout, type, tier, int64_t{1024}, int64_t{4096}, int64_t{16}, threads)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RegisterBenchmark(fmt::format("decode_hot/{}/256x1024", name).c_str(), decode_hot, layout, type, tier);
  // An expert of a MoE layer at batch 16: a small matrix, a few rows.
  for (const int64_t m : {1, 2, 4}) {
    benchmark::RegisterBenchmark(fmt::format("decode/{}/1024x1024/m:{}/threads:2", name, m).c_str(), decode,
                                 layout, type, tier, int64_t{1024}, int64_t{1024}, m, 2)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  for (const int64_t m : {4, 16, 64, 512}) {
    for (const int threads : {1, 2}) {
      benchmark::RegisterBenchmark(fmt::format("prefill/{}/m:{}/threads:{}", name, m, threads).c_str(),
                                   prefill, layout, type, tier, m, threads)
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
}

void register_all() {
  for (const GgmlType type : kTypes) {
    for (const Isa tier : {Isa::kAvx2, Isa::kAvxVnni, Isa::kAvx512, Isa::kAmx}) {
      if (!isa_supported(detect_cpu_features(), tier)) continue;
      const MatmulKernels kernels = matmul_kernels_for_isa(type, tier);
      if (kernels.matmul_packed != nullptr) {
        const WeightLayout layout = packed_layout_of(type);
        register_one(layout, type, tier, fmt::format("{}/{}", layout_name(layout), isa_name(tier)));
      }
      if (kernels.matmul == nullptr) continue;
      register_one(WeightLayout::kRows, type, tier, fmt::format("{}/{}", ggml_type_name(type), isa_name(tier)));
    }
  }
}

}  // namespace
}  // namespace met::cpu

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  met::cpu::register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
