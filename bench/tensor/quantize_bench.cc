// Throughput of row conversion: every (de)quantizer of every ISA tier this CPU
// supports, on 64 Ki-element rows of N(0, 1) data (256 KiB of floats, so the
// float side stays in L2 and the kernel, not DRAM, is measured).
// Items/s counts elements; bytes/s counts the float side (4 bytes each).
// Run: build/bench/tensor/met_tensor_bench [--benchmark_filter=q4_k]
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "gguf/ggml_type.h"
#include "tensor/row_kernels.h"

namespace met {
namespace {

constexpr int64_t kRowElements = int64_t{1} << 16;

constexpr GgmlType kTypes[] = {
    GgmlType::kF16,  GgmlType::kBF16, GgmlType::kQ8_0, GgmlType::kQ4_0, GgmlType::kQ4_1,
    GgmlType::kQ5_0, GgmlType::kQ5_1, GgmlType::kQ2_K, GgmlType::kQ3_K, GgmlType::kQ4_K,
    GgmlType::kQ5_K, GgmlType::kQ6_K, GgmlType::kQ8_K,
};

std::vector<float> gaussian_row() {
  std::mt19937 rng(42);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(kRowElements);
  for (float& v : x) v = dist(rng);
  return x;
}

std::vector<uint8_t> row_buffer(GgmlType type) {
  return std::vector<uint8_t>(static_cast<size_t>(ggml_row_bytes(type, kRowElements).value()));
}

void count(benchmark::State& state) {
  state.SetItemsProcessed(state.iterations() * kRowElements);
  state.SetBytesProcessed(state.iterations() * kRowElements * static_cast<int64_t>(sizeof(float)));
}

void quantize(benchmark::State& state, GgmlType type, ref::QuantizeRowFn fn) {
  const std::vector<float> x = gaussian_row();
  std::vector<uint8_t> dst = row_buffer(type);
  for (auto _ : state) {
    fn(x.data(), dst.data(), kRowElements);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  count(state);
}

void dequantize(benchmark::State& state, GgmlType type, ref::DequantizeRowFn fn) {
  const std::vector<float> x = gaussian_row();
  std::vector<uint8_t> src = row_buffer(type);
  // Encode real data where met can, so scales and codes are typical.
  const ref::QuantizeRowFn encoder = row_kernels_for_isa(type, Isa::kScalar).quantize;
  if (encoder != nullptr) encoder(x.data(), src.data(), kRowElements);
  std::vector<float> dst(kRowElements);
  for (auto _ : state) {
    fn(src.data(), dst.data(), kRowElements);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  count(state);
}

void register_all() {
  const Isa best = best_isa(detect_cpu_features());
  for (const GgmlType type : kTypes) {
    for (const Isa tier : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
      if (tier > best) continue;
      const RowKernels kernels = row_kernels_for_isa(type, tier);
      const std::string suffix = fmt::format("{}/{}", ggml_type_name(type), isa_name(tier));
      if (kernels.quantize != nullptr) {
        benchmark::RegisterBenchmark(("quantize/" + suffix).c_str(), quantize, type,
                                     kernels.quantize);
      }
      if (kernels.dequantize != nullptr) {
        benchmark::RegisterBenchmark(("dequantize/" + suffix).c_str(), dequantize, type,
                                     kernels.dequantize);
      }
    }
  }
}

}  // namespace
}  // namespace met

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  met::register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
