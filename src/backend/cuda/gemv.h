// The GEMV of the grid forward pass on a GPU: y = W x for up to
// kMaxGemvBatch activation rows, W in any weight type the backend reads
// (dequant_hd.h). Two kernels with one contract:
//   - the tiled path, for F32/F16/BF16 rows and tiled Q8_0 (weight_tiling.h)
//     whose columns fill whole warp tiles: a warp per 2 or 4 weight rows,
//     each lane loading 16 bytes of each row per tile with the activations
//     it multiplies in float4 loads that the warp makes contiguous (a row's
//     bytes stream from memory once per call, as a decode step wants);
//   - by groups, for every other case: a warp per row, a lane per 32-column
//     group (dot_group).
// Each lane sums its columns with fmaf in a fixed order, then the warp
// reduces by shuffles in a fixed tree, so a row's result does not depend
// on `batch` or on the rows beside it (batch invariance), only on which
// path its type and shape take.
// C++17 (nvcc). Threading: launches on the caller's stream.
// Tested by tests/backend/cuda_kernels_test.cc (label gpu).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backend/cuda/dequant_hd.h"
#include "core/status.h"

namespace met::cuda {

inline constexpr int32_t kMaxGemvBatch = 8;

// y[b * out_rows + j] = dot(weight row j, x[b * cols ..]) for b < batch.
// REQUIRES: 1 <= batch <= kMaxGemvBatch.
Status gemv(HdWeightType type, const uint8_t* weights, int64_t out_rows, int64_t cols, int64_t row_bytes,
            const float* x, int32_t batch, float* y, cudaStream_t stream);

// Whether gemv takes the tiled path for these arguments (tests use it to
// cover both paths).
bool gemv_is_tiled(HdWeightType type, const uint8_t* weights, int64_t cols, int64_t row_bytes, const float* x);

}  // namespace met::cuda
