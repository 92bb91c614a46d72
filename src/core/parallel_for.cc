// parallel_for over std::thread. Tested by tests/core/parallel_for_test.cc.
#include "core/parallel_for.h"

#include <sched.h>

#include <algorithm>
#include <thread>
#include <vector>

namespace met {

int default_num_threads() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

void parallel_for(int64_t n, int num_threads, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  const int64_t workers = std::clamp<int64_t>(num_threads, 1, n);
  const int64_t chunk = (n + workers - 1) / workers;
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(workers - 1));
  for (int64_t w = 1; w < workers; ++w) {
    const int64_t begin = w * chunk;
    const int64_t end = std::min(n, begin + chunk);
    if (begin >= end) break;
    threads.emplace_back([&fn, begin, end] { fn(begin, end); });
  }
  fn(0, std::min(n, chunk));
  for (auto& t : threads) t.join();
}

}  // namespace met
