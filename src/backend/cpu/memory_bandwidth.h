// measure_read_bandwidth: how fast this machine streams memory into the cores
// right now, read with `num_threads` threads over a buffer far larger than
// the caches. `met bench` divides it by the bytes a decode step reads to give
// the memory-bound ceiling its decode speed is compared with.
// Threading: spawns and joins its own threads. Tested by
// tests/backend/memory_bandwidth_test.cc (that it measures something, not how much).
#pragma once

#include <cstddef>

namespace met::cpu {

// Best of `repeats` passes over `bytes` bytes, in bytes per second.
double measure_read_bandwidth(int num_threads, size_t bytes = size_t{2} << 30, int repeats = 3);

}  // namespace met::cpu
