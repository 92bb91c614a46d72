// CudaGridBackend: GridBackend on a CUDA device (grid_backend.h). Memory
// from cudaMalloc (zeroed) and pinned host memory from cudaMallocHost; a
// step is one host-to-device copy of its staged bytes, the forward pass's
// kernels (a decode-only step's as a CUDA graph of its shape, captured the
// first time the shape is seen: rows, outputs, attention partitions and
// staging slot), and the device-to-host copies of its argmax and (when an
// output wants them) logits, all on one stream, then an event; wait()
// blocks on that event. busy_ns sums each step's event-timed span.
// GridDevice with this backend is met's CUDA device.
// Threading: one caller (the engine thread).
// Tested on a GPU by tests/model/cuda_grid_test.cc (label gpu).
#pragma once

#include <memory>

#include "backend/cuda/grid_backend.h"

namespace met::cuda {

// A backend on CUDA device `index`; an error naming the cause without one.
Result<std::unique_ptr<GridBackend>> make_cuda_grid_backend(int index);

}  // namespace met::cuda
