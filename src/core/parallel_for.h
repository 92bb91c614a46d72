// parallel_for: runs fn(begin, end) over [0, n) split into contiguous chunks on
// up to `num_threads` threads (the caller's thread takes the first chunk) and
// waits for all. For one-shot bulk work at load or make-model time, not for the
// per-token path (the backend has its own persistent pool).
// Threading: fn must be safe to call concurrently on disjoint ranges.
// Tested by tests/core/parallel_for_test.cc.
#pragma once

#include <cstdint>
#include <functional>

namespace met {

// Number of threads to use by default: the cores this process may run on.
int default_num_threads();

void parallel_for(int64_t n, int num_threads, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace met
