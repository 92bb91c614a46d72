// LoRA kernel throughput (backend/cpu/kernels/lora_kernels.h) per ISA tier
// this CPU supports and per storage (F32, F16): bytes of adapter matrices
// read per second when they come from DRAM, as in a decode step (a step
// reads each adapter's A and B once per group of rows, between weight
// streams that evict them).
//   shrink/<tier>/<dtype>/rows:<m>: t = x·Aᵀ, A rank 16 × 1024, m rows.
//   expand/<tier>/<dtype>/rows:<m>: y += scale·B·t, B 4096 × rank 16.
// Each iteration walks copies of the matrix totalling >= 256 MiB (well past
// L3), one thread. Compare with met_matmul_bench's decode figures at m = 1
// (the rate a weight stream reaches).
// Run: build/bench/backend/met_lora_bench [--benchmark_filter=expand]
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/kernels/lora_kernels.h"
#include "backend/lora_adapter.h"
#include "core/cpu_features.h"

namespace met::cpu {
namespace {

constexpr size_t kStreamBytes = size_t{256} << 20;
constexpr int32_t kRank = 16;

struct Copies {
  std::vector<uint16_t> f16;
  std::vector<float> f32;
  size_t matrix_elems = 0;
  int copies = 0;
  const void* matrix(bool use_f16, int c) const {
    const size_t at = static_cast<size_t>(c) * matrix_elems;
    return use_f16 ? static_cast<const void*>(f16.data() + at) : static_cast<const void*>(f32.data() + at);
  }
};

// Copies of a matrix of `elems` small values, >= kStreamBytes in all.
Copies make_copies(size_t elems, bool use_f16) {
  Copies c;
  c.matrix_elems = elems;
  const size_t elem_bytes = use_f16 ? 2 : 4;
  c.copies = static_cast<int>(std::max<size_t>(1, kStreamBytes / (elems * elem_bytes)));
  const size_t total = elems * static_cast<size_t>(c.copies);
  std::mt19937 rng(1);
  if (use_f16) {
    c.f16.resize(total);
    for (uint16_t& v : c.f16) v = static_cast<uint16_t>(0x2000 + rng() % 0x1000);  // about 0.01 .. 0.03
  } else {
    c.f32.resize(total);
    for (float& v : c.f32) v = 0.01f * static_cast<float>(rng() % 100) / 100.0f;
  }
  return c;
}

std::vector<int32_t> row_ids(int64_t m) {
  std::vector<int32_t> rows(static_cast<size_t>(m));
  for (int64_t i = 0; i < m; ++i) rows[static_cast<size_t>(i)] = static_cast<int32_t>(i);
  return rows;
}

void shrink(benchmark::State& state, Isa tier, bool use_f16, int64_t m) {
  constexpr int64_t kCols = 1024;
  const LoraKernels k = lora_kernels_for_isa(tier);
  const Copies a = make_copies(size_t{kRank} * kCols, use_f16);
  const std::vector<float> x(static_cast<size_t>(m * kCols), 0.5f);
  std::vector<float> t(static_cast<size_t>(m * kRank));
  const std::vector<int32_t> rows = row_ids(m);
  for (auto _ : state) {
    for (int c = 0; c < a.copies; ++c) {
      k.shrink(a.matrix(use_f16, c), use_f16, kRank, kCols, x.data(), kCols, rows.data(), m, t.data(), kRank);
    }
    benchmark::DoNotOptimize(t.data());
  }
  const size_t bytes = a.matrix_elems * (use_f16 ? 2 : 4) * static_cast<size_t>(a.copies);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}

void expand(benchmark::State& state, Isa tier, bool use_f16, int64_t m) {
  constexpr int64_t kOut = 4096;
  const LoraKernels k = lora_kernels_for_isa(tier);
  const Copies b = make_copies(static_cast<size_t>(lora_panel_floats(kOut, kRank)), use_f16);
  const std::vector<float> t(static_cast<size_t>(m * kRank), 0.25f);
  std::vector<float> y(static_cast<size_t>(m * kOut));
  const std::vector<int32_t> rows = row_ids(m);
  for (auto _ : state) {
    for (int c = 0; c < b.copies; ++c) {
      k.expand(b.matrix(use_f16, c), use_f16, kRank, kOut, 0.5f, t.data(), kRank, rows.data(), m, y.data(), kOut, 0,
               kOut);
    }
    benchmark::DoNotOptimize(y.data());
  }
  const size_t bytes = b.matrix_elems * (use_f16 ? 2 : 4) * static_cast<size_t>(b.copies);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}

void register_all() {
  const Isa best = best_isa(detect_cpu_features());
  for (const Isa tier : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
    if (tier > best) continue;
    for (const bool use_f16 : {false, true}) {
      for (const int64_t m : {1, 4, 16}) {
        const std::string suffix = fmt::format("{}/{}/rows:{}", isa_name(tier), use_f16 ? "f16" : "f32", m);
        benchmark::RegisterBenchmark(("shrink/" + suffix).c_str(), shrink, tier, use_f16, m)
            ->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark(("expand/" + suffix).c_str(), expand, tier, use_f16, m)
            ->Unit(benchmark::kMillisecond);
      }
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
