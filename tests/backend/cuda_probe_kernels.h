// Probe kernels for the gpu tests: each runs one piece of the per-element
// math the CUDA backend's kernels share with the host (dequant_hd.h,
// rope_hd.h, softmax_fold.h) over whole arrays, so a test can compare the
// device's results with the CPU references bit for bit: weight rows decoded
// to float, RoPE from the host-built angle table, the fold of split-KV
// attention partials in partition order. Test code only: the forward pass
// calls the shared math from its own kernels.
// Every pointer is device memory; each call enqueues on `stream` and
// returns the launch's error, if any.
// Threading: any thread; the stream orders the work.
// Used by tests/backend/cuda_kernels_test.cc (label gpu).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backend/cuda/dequant_hd.h"
#include "core/status.h"

namespace met::cuda {

// out[r * cols + c] = element c of weight row r (rows row_bytes apart).
Status dequantize_rows(HdWeightType type, const uint8_t* rows, int64_t num_rows, int64_t cols, int64_t row_bytes,
                       float* out, cudaStream_t stream);

// Rotates the first rope_dims of each of `heads` heads of each row (rows
// row_stride floats apart) by its position's row of `table` (rope_hd.h).
Status rope_rows(float* x, int32_t rows, int64_t row_stride, int32_t heads, int32_t head_dim, int32_t rope_dims,
                 bool neox, const int32_t* positions, const float* table, cudaStream_t stream);

// Folds, per query q, the partials of partitions 0 .. num_partitions - 1 in
// that order (record p of q at partials + (p * queries + q) * (2 + head_dim):
// m, l, then acc) and writes acc / l to out[q * head_dim ..].
Status fold_partials(const float* partials, int32_t num_partitions, int32_t queries, int32_t head_dim, float* out,
                     cudaStream_t stream);

}  // namespace met::cuda
