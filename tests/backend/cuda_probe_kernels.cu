// Probe kernels for the gpu tests (see cuda_probe_kernels.h).
#include "cuda_probe_kernels.h"

#include "backend/cuda/cuda_buffer.h"
#include "backend/cuda/rope_hd.h"
#include "backend/softmax_fold.h"

namespace met::cuda {
namespace {

constexpr int kThreads = 256;

int blocks_for(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 65535 ? blocks : 65535);
}

__global__ void dequantize_kernel(HdWeightType type, const uint8_t* rows, int64_t num_rows, int64_t cols,
                                  int64_t row_bytes, float* out) {
  const int64_t n = num_rows * cols;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    out[i] = weight_element(type, rows + (i / cols) * row_bytes, i % cols);
  }
}

__global__ void rope_kernel(float* x, int32_t rows, int64_t row_stride, int32_t heads, int32_t head_dim,
                            int32_t rope_dims, bool neox, const int32_t* positions, const float* table) {
  const int32_t pairs = rope_dims / 2;
  const int64_t n = int64_t{rows} * heads * pairs;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    const auto pair = static_cast<int32_t>(i % pairs);
    const auto head = static_cast<int32_t>(i / pairs % heads);
    const auto row = static_cast<int32_t>(i / pairs / heads);
    float* h = x + row * row_stride + int64_t{head} * head_dim;
    rope_rotate_pair(h, pair, rope_dims, neox, table + int64_t{positions[row]} * rope_dims);
  }
}

// A block per query; thread d folds element d (and every thread the m, l
// weights, the same for all) over the partitions in order.
__global__ void fold_kernel(const float* partials, int32_t num_partitions, int32_t queries, int32_t head_dim,
                            float* out) {
  const int32_t q = blockIdx.x;
  const int64_t record = 2 + head_dim;
  for (int32_t d = threadIdx.x; d < head_dim; d += blockDim.x) {
    const float* first = partials + int64_t{q} * record;
    float m = first[0], l = first[1], acc = first[2 + d];
    for (int32_t p = 1; p < num_partitions; ++p) {
      const float* part = partials + (int64_t{p} * queries + q) * record;
      const FoldWeights w = fold_weights(m, part[0]);
      m = w.m;
      l = fold_term(l, part[1], w);
      acc = fold_term(acc, part[2 + d], w);
    }
    out[int64_t{q} * head_dim + d] = acc / l;
  }
}

}  // namespace

Status dequantize_rows(HdWeightType type, const uint8_t* rows, int64_t num_rows, int64_t cols, int64_t row_bytes,
                       float* out, cudaStream_t stream) {
  if (num_rows * cols == 0) return ok_status();
  dequantize_kernel<<<blocks_for(num_rows * cols), kThreads, 0, stream>>>(type, rows, num_rows, cols, row_bytes, out);
  return cuda_status(cudaGetLastError(), "dequantize launch");
}

Status rope_rows(float* x, int32_t rows, int64_t row_stride, int32_t heads, int32_t head_dim, int32_t rope_dims,
                 bool neox, const int32_t* positions, const float* table, cudaStream_t stream) {
  const int64_t n = int64_t{rows} * heads * (rope_dims / 2);
  if (n == 0) return ok_status();
  rope_kernel<<<blocks_for(n), kThreads, 0, stream>>>(x, rows, row_stride, heads, head_dim, rope_dims, neox,
                                                      positions, table);
  return cuda_status(cudaGetLastError(), "rope launch");
}

Status fold_partials(const float* partials, int32_t num_partitions, int32_t queries, int32_t head_dim, float* out,
                     cudaStream_t stream) {
  if (queries == 0) return ok_status();
  if (num_partitions < 1) return invalid_argument("fold_partials: {} partitions", num_partitions);
  fold_kernel<<<queries, 128, 0, stream>>>(partials, num_partitions, queries, head_dim, out);
  return cuda_status(cudaGetLastError(), "fold launch");
}

}  // namespace met::cuda
