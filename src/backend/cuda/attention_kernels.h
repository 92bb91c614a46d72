// The grid forward pass's attention on a GPU, a block of threads where
// forward_ops.h has a thread: the Q/K post-processing and KV store a block
// per head (a thread per dim and per RoPE pair); attention a block per
// (query head, row) or (query head, partition), a warp per position for
// the scores (lanes over the head's dims, K rows read contiguously), block
// reductions for the max and the sum, a thread per dim for the V sum and
// for the merge. Both paths compute each partition's partial with the same
// block function and fold partials in partition order with
// softmax_fold.h, so a row gives the same bits whole (a seq of several
// rows: AttentionOp) as split (a one-row seq: AttentionPartialOp, then the
// merge), as the host functors do; the bits differ from the host's
// (another summation order), within float rounding.
// C++17 (nvcc). Threading: launches on the caller's stream.
// Tested on a GPU by tests/model/cuda_grid_test.cc (the reference forward
// at every position, chunked against one a step bit for bit, attention
// across partitions, the host grid and the CPU within tolerance).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backend/cuda/forward_ops.h"

namespace met::cuda {

// op(i) for i < n, as QkPostOp's for_each (a block per index).
cudaError_t launch_qk_post(const QkPostOp& op, int64_t n, cudaStream_t stream);

// op(i) for i < n, as AttentionOp's for_each.
cudaError_t launch_attention_whole(const AttentionOp& op, int64_t n, cudaStream_t stream);

// op(i) for i < n, as AttentionPartialOp's for_each.
cudaError_t launch_attention_partials(const AttentionPartialOp& op, int64_t n, cudaStream_t stream);

// op(i) for i < n, as AttentionMergeOp's for_each (a block per index).
cudaError_t launch_attention_merge(const AttentionMergeOp& op, int64_t n, cudaStream_t stream);

}  // namespace met::cuda
