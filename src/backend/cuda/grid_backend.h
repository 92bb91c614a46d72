// GridBackend: where the grid forward pass (forward_program.h) runs for
// GridDevice (model/grid_device.h): memory the program reads and writes,
// copies in and out of it, and steps run in launch order. HostGridBackend
// runs on the host (tests, and the proof of the program on machines without
// a GPU); CudaGridBackend (cuda_grid_backend.h, MET_CUDA builds) on a GPU:
// one host-to-device copy of the staged step, the program's kernels on a
// stream, the device-to-host copy of the argmax and logits, an event.
// Threading: one caller (the device's engine thread).
// Tested by tests/model/grid_device_test.cc (host) and, on a GPU, by the
// same suite through CudaGridBackend.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "backend/cuda/forward_program.h"
#include "core/status.h"

namespace met::cuda {

// One step for the backend: the staged bytes (host) to copy to `device_staging`
// first, the program's inputs (pointers into device memory), and where the
// results go on the host.
struct GridStep {
  uint64_t ticket = 0;
  const uint8_t* host_staging = nullptr;
  uint8_t* device_staging = nullptr;
  int64_t staged_bytes = 0;
  StepView view;  // into device_staging
  StepCounts counts;
  const GridModel* model = nullptr;
  GridScratch scratch;
  int32_t* host_argmax = nullptr;  // counts.outputs of them
  float* host_logits = nullptr;    // outputs * vocab, or null when no output wants logits
};

// CUDA graphs of decode steps: captured, how long capturing took, replays.
struct GraphStats {
  int64_t captures = 0;
  int64_t capture_ns = 0;
  int64_t replays = 0;
};

class GridBackend {
 public:
  virtual ~GridBackend() = default;
  virtual const char* name() const = 0;
  // Device memory, zeroed.
  virtual Result<void*> allocate(size_t bytes) = 0;
  virtual void release(void* ptr) = 0;
  // Host memory the device copies from and to at full speed (pinned).
  virtual Result<void*> allocate_host(size_t bytes) = 0;
  virtual void release_host(void* ptr) = 0;
  // Synchronous copies, while no step is in flight (load, spill).
  virtual Status to_device(void* dst, const void* src, size_t bytes) = 0;
  virtual Status to_host(void* dst, const void* src, size_t bytes) = 0;
  // Starts a step after every step launched before it.
  virtual Status launch(const GridStep& step) = 0;
  // Waits for step `ticket` (the oldest not yet waited for); its results are
  // then in the host buffers it named.
  virtual Status wait(uint64_t ticket) = 0;
  virtual int64_t busy_ns() const { return 0; }
  virtual GraphStats graph_stats() const { return {}; }
  // The memory bandwidth the device reaches now, in bytes per second, best
  // of `repeats` (0 when it cannot be measured): the host's read rate, or a
  // GPU's device-to-device copy rate (bytes read plus bytes written). While
  // no step is in flight.
  virtual double measure_bandwidth(int repeats) = 0;
  // Device memory free now, where the backend has a memory of its own (a
  // GPU's); empty for the host, whose KV pool is sized by the flags.
  virtual std::optional<int64_t> free_memory_bytes() const { return std::nullopt; }
};

// The host's: memory from the heap, steps run at launch.
std::unique_ptr<GridBackend> make_host_grid_backend();

}  // namespace met::cuda
