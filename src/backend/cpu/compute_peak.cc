// compute_peak.h's dispatch and timing; the loops are in
// compute_peak_avx512.cc, compute_peak_avxvnni.cc and compute_peak_avx2.cc.
// Threading: see compute_peak.h. Tested by tests/backend/compute_peak_test.cc.
#include "backend/cpu/compute_peak.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace met::cpu {
namespace {

int64_t run_loop(MacKind kind, Isa isa, int64_t iterations) {
  if (isa >= Isa::kAvx512) return avx512::mac_loop(kind, iterations);
  if (isa == Isa::kAvxVnni && kind == MacKind::kInt8Dot) return avxvnni::mac_loop(kind, iterations);
  if (isa >= Isa::kAvx2) return avx2::mac_loop(kind, iterations);
  return 0;
}

// MACs a second of one run: every thread starts together and runs the same
// rounds; the wall time of the slowest counts.
double one_run(MacKind kind, Isa isa, int num_threads, int64_t iterations) {
  std::atomic<int64_t> macs{0};
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  const auto t0 = std::chrono::steady_clock::now();
  for (int t = 0; t < num_threads; ++t) {
    threads.emplace_back([&] {
      ready.fetch_add(1);
      while (ready.load() < num_threads) {
      }
      macs.fetch_add(run_loop(kind, isa, iterations));
    });
  }
  for (std::thread& t : threads) t.join();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s > 0 ? static_cast<double>(macs.load()) / s : 0.0;
}

}  // namespace

MacKind mac_kind_of(GgmlType weight_type, Isa isa) {
  if (weight_type == GgmlType::kF32 || weight_type == GgmlType::kF16) return MacKind::kFp32Fma;
  if (weight_type == GgmlType::kBF16) return isa >= Isa::kAvx512 ? MacKind::kBf16Dot : MacKind::kFp32Fma;
  return MacKind::kInt8Dot;
}

std::string_view mac_instruction(MacKind kind, Isa isa) {
  switch (kind) {
    case MacKind::kInt8Dot:
      return isa >= Isa::kAvxVnni ? "vpdpbusd" : "vpmaddubsw";
    case MacKind::kBf16Dot:
      return "vdpbf16ps";
    case MacKind::kFp32Fma:
      return "vfmadd";
  }
  return "?";
}

double measure_mac_rate(MacKind kind, Isa isa, int num_threads, int repeats) {
  if (isa < Isa::kAvx2 || num_threads < 1) return 0.0;
  constexpr int64_t kIterations = 2'000'000;  // 24 M instructions a thread: a few ms
  double best = 0.0;
  for (int r = 0; r < std::max(1, repeats); ++r) best = std::max(best, one_run(kind, isa, num_threads, kIterations));
  return best;
}

}  // namespace met::cpu
