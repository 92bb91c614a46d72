// Memory read bandwidth probe. Tested by tests/backend/memory_bandwidth_test.cc.
#include "backend/cpu/memory_bandwidth.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

namespace met::cpu {
namespace {

struct FreeDeleter {
  void operator()(uint8_t* p) const { std::free(p); }
};

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

double measure_read_bandwidth(int num_threads, size_t bytes, int repeats) {
  num_threads = std::max(1, num_threads);
  bytes = std::max<size_t>(bytes / 4096 * 4096, 4096);
  std::unique_ptr<uint8_t, FreeDeleter> buf(static_cast<uint8_t*>(std::aligned_alloc(4096, bytes)));
  if (!buf) return 0.0;
  std::memset(buf.get(), 1, bytes);  // fault every page in before timing
  double best = 0.0;
  std::vector<uint64_t> sinks(static_cast<size_t>(num_threads));
  for (int r = 0; r < repeats; ++r) {
    const size_t per = bytes / static_cast<size_t>(num_threads) / 128 * 128;
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (int t = 0; t < num_threads; ++t) {
      threads.emplace_back([&, t] { sinks[static_cast<size_t>(t)] = read_range(buf.get() + per * t, per); });
    }
    for (auto& t : threads) t.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, static_cast<double>(per * static_cast<size_t>(num_threads)) / s);
  }
  volatile uint64_t keep = 0;
  for (uint64_t v : sinks) keep = keep + v;
  return best;
}

}  // namespace met::cpu
