// Memory read bandwidth probe. Tested by tests/backend/memory_bandwidth_test.cc.
#include "backend/cpu/memory_bandwidth.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

namespace met::cpu {
namespace {

// Sums 32-byte words so the loads cannot be optimised away (unsigned: the
// sum wraps by design).
uint64_t read_range(const uint8_t* p, size_t n) {
  __m256i acc0 = _mm256_setzero_si256(), acc1 = _mm256_setzero_si256();
  for (size_t i = 0; i + 128 <= n; i += 128) {
    acc0 = _mm256_add_epi64(acc0, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i)));
    acc1 = _mm256_add_epi64(acc1, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 32)));
    acc0 = _mm256_add_epi64(acc0, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 64)));
    acc1 = _mm256_add_epi64(acc1, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 96)));
  }
  const __m256i acc = _mm256_add_epi64(acc0, acc1);
  return static_cast<uint64_t>(_mm256_extract_epi64(acc, 0)) +
         static_cast<uint64_t>(_mm256_extract_epi64(acc, 3));
}

}  // namespace

ReadBandwidthProbe::ReadBandwidthProbe(int num_threads, size_t bytes)
    : num_threads_(std::max(1, num_threads)), bytes_(std::max<size_t>(bytes / 4096 * 4096, 4096)) {
  Result<HugePageMemory> buf = HugePageMemory::map(bytes_);
  if (!buf.ok()) return;
  buf_ = std::move(buf).value();
  std::memset(buf_.data(), 1, bytes_);  // fault every page in before timing
}

double ReadBandwidthProbe::measure(int repeats) const {
  if (buf_.data() == nullptr) return 0.0;
  double best = 0.0;
  std::vector<uint64_t> sinks(static_cast<size_t>(num_threads_));
  const size_t per = bytes_ / static_cast<size_t>(num_threads_) / 128 * 128;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (int t = 0; t < num_threads_; ++t) {
      threads.emplace_back([&, t] { sinks[static_cast<size_t>(t)] = read_range(buf_.data() + per * t, per); });
    }
    for (auto& t : threads) t.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, static_cast<double>(per * static_cast<size_t>(num_threads_)) / s);
  }
  volatile uint64_t keep = 0;
  for (uint64_t v : sinks) keep = keep + v;
  return best;
}

double measure_read_bandwidth(int num_threads, size_t bytes, int repeats) {
  return ReadBandwidthProbe(num_threads, bytes).measure(repeats);
}

}  // namespace met::cpu
