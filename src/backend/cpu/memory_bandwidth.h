// Read bandwidth probes: how fast this machine streams memory into the cores
// right now, read with `num_threads` threads over a buffer far larger than
// the caches. `met bench` divides it by the bytes a decode step reads to give
// the memory-bound ceiling each decode figure is compared with; on a shared
// host that rate moves by tens of percent from minute to minute, so
// ReadBandwidthProbe keeps its buffer and measures again beside each figure.
// The buffer is mapped as the weights and the KV pool are (advised for huge
// pages, huge_page_memory.h), so the ceiling is what memory gives the pages
// the kernels read; in 4 KiB pages it would read up to half as fast.
// Threading: a probe from one thread at a time (it spawns and joins its own
// threads). Tested by tests/backend/memory_bandwidth_test.cc (that it
// measures something, not how much).
#pragma once

#include <cstddef>
#include <cstdint>

#include "backend/cpu/huge_page_memory.h"

namespace met::cpu {

class ReadBandwidthProbe {
 public:
  // A buffer of `bytes` (rounded down to pages, at least one), every page
  // faulted in now so that no measurement pays for it.
  ReadBandwidthProbe(int num_threads, size_t bytes);
  // Best of `repeats` passes over the buffer, in bytes per second (0 when
  // the buffer could not be allocated).
  double measure(int repeats) const;

 private:
  int num_threads_;
  size_t bytes_;
  HugePageMemory buf_;
};

// A probe of `bytes`, measured once: best of `repeats` passes.
double measure_read_bandwidth(int num_threads, size_t bytes = size_t{2} << 30, int repeats = 3);

}  // namespace met::cpu
