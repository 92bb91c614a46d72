// The grid forward pass on a CUDA stream: forward_program.h's ops, each
// launched as a grid-stride kernel of its functor, and its matrix products
// as the GEMV of gemv.h over groups of kMaxGemvBatch rows. Errors
// of the launches come back as the first failing cudaError_t.
// C++17 (the .cu that defines it). Threading: one caller per stream.
// Tested on a GPU by tests/model/cuda_grid_test.cc (label gpu).
#pragma once

#include <cuda_runtime.h>

#include "backend/cuda/forward_program.h"

namespace met::cuda {

cudaError_t run_forward_on_stream(const GridModel& model, const GridScratch& scratch, const StepView& step,
                                  const StepCounts& counts, cudaStream_t stream);

}  // namespace met::cuda
