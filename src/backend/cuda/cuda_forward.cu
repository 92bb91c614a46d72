// The grid forward pass on a CUDA stream (see cuda_forward.h).
#include "backend/cuda/cuda_forward.h"

#include "backend/cuda/attention_kernels.h"
#include "backend/cuda/gemv.h"
#include "backend/cuda/math_kernels.h"

namespace met::cuda {
namespace {

constexpr int kThreads = 256;

template <class Op>
__global__ void apply_kernel(int64_t n, Op op) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    op(i);
  }
}

// Output o's bans, then its argmax, a block per output: each thread scans
// a stride keeping its first maximum (NaN skipped), then a tree reduction
// keeps the larger value, the smaller index on a tie: the serial rule's
// first maximum (BanArgmaxOp).
__global__ void ban_argmax_kernel(BanArgmaxOp op) {
  const int64_t o = blockIdx.x;
  const int tid = static_cast<int>(threadIdx.x);
  float* row = op.logits + o * op.vocab;
  const PackedOutput out = op.step.outputs[o];
  for (int k = tid; k < out.num_banned; k += kThreads) row[op.step.banned[out.banned_begin + k]] = -INFINITY;
  __syncthreads();
  float best_value = 0.0f;
  int64_t best = -1;
  for (int64_t t = tid; t < op.vocab; t += kThreads) {
    const float v = row[t];
    if (v != v) continue;
    if (best < 0 || v > best_value) best = t, best_value = v;
  }
  __shared__ float values[kThreads];
  __shared__ long long indices[kThreads];
  values[tid] = best_value;
  indices[tid] = best;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (tid < half) {
      const long long i = indices[tid + half];
      const float v = values[tid + half];
      if (i >= 0 && (indices[tid] < 0 || v > values[tid] || (v == values[tid] && i < indices[tid]))) {
        indices[tid] = i;
        values[tid] = v;
      }
    }
    __syncthreads();
  }
  if (tid == 0) op.argmax[o] = static_cast<int32_t>(indices[0] < 0 ? 0 : indices[0]);
}

// The sum over the block of each thread's `value`, in a fixed tree order
// (a row's bits do not depend on its batch). Every thread gets it. Once
// per kernel: a second call would overwrite the sums before all had read.
__device__ double block_sum(double value) {
  __shared__ double sums[kThreads];
  const int tid = static_cast<int>(threadIdx.x);
  sums[tid] = value;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (tid < half) sums[tid] += sums[tid + half];
    __syncthreads();
  }
  return sums[0];
}

// out = row * w / rms(row), a block per row: sums of squares in double over
// each thread's stride, then block_sum. Each thread writes only the
// elements it read, so `out` may be `row`.
__device__ void rms_norm_block(const float* row, const float* w, int64_t width, float eps, float* out) {
  double sum = 0.0;
  for (int64_t c = threadIdx.x; c < width; c += kThreads) sum += static_cast<double>(row[c]) * row[c];
  const auto mean = static_cast<float>(block_sum(sum) / static_cast<double>(width));
  const float scale = 1.0f / sqrtf(mean + eps);
  for (int64_t c = threadIdx.x; c < width; c += kThreads) out[c] = row[c] * scale * w[c];
}

// RMSNorm, a block per row (RmsNormOp).
__global__ void rms_norm_kernel(RmsNormOp op) {
  const int64_t r = blockIdx.x;
  const int64_t src = op.outputs == nullptr ? r : op.outputs[r].row;
  rms_norm_block(op.x + src * op.width, op.w, op.width, op.eps, op.out + r * op.width);
}

// The residual add fused with the next norm, a block per row: each thread
// adds its stride of the row, then rms_norm_block reads those same
// elements (AddNormOp).
__global__ void add_norm_kernel(AddNormOp op) {
  const int64_t r = blockIdx.x;
  float* row = op.x + r * op.width;
  const float* add = op.t + r * op.width;
  for (int64_t c = threadIdx.x; c < op.width; c += kThreads) row[c] = row[c] + add[c];
  rms_norm_block(row, op.w, op.width, op.eps, op.out + r * op.width);
}

// The executor forward_program.h runs on: kernels on one stream, the first
// error kept. The ops with a cooperative kernel of their own (a block per
// row or head: norms, argmax, attention_kernels.h) take it; every other op
// runs its functor a thread per index.
class CudaExec {
 public:
  explicit CudaExec(cudaStream_t stream) : stream_(stream) {}

  void for_each(int64_t n, const BanArgmaxOp& op) {
    if (n == 0 || error_ != cudaSuccess) return;
    ban_argmax_kernel<<<static_cast<unsigned>(n), kThreads, 0, stream_>>>(op);
    keep(cudaGetLastError());
  }

  void for_each(int64_t n, const AddNormOp& op) {
    if (n == 0 || error_ != cudaSuccess) return;
    add_norm_kernel<<<static_cast<unsigned>(n), kThreads, 0, stream_>>>(op);
    keep(cudaGetLastError());
  }

  void for_each(int64_t n, const RmsNormOp& op) {
    if (n == 0 || error_ != cudaSuccess) return;
    rms_norm_kernel<<<static_cast<unsigned>(n), kThreads, 0, stream_>>>(op);
    keep(cudaGetLastError());
  }

  void for_each(int64_t n, const AttentionOp& op) {
    if (n > 0 && error_ == cudaSuccess) keep(launch_attention_whole(op, n, stream_));
  }

  void for_each(int64_t n, const AttentionPartialOp& op) {
    if (n > 0 && error_ == cudaSuccess) keep(launch_attention_partials(op, n, stream_));
  }

  void for_each(int64_t n, const AttentionMergeOp& op) {
    if (n > 0 && error_ == cudaSuccess) keep(launch_attention_merge(op, n, stream_));
  }

  template <class Op>
  void for_each(int64_t n, const Op& op) {
    if (n == 0 || error_ != cudaSuccess) return;
    const int64_t blocks = (n + kThreads - 1) / kThreads;
    apply_kernel<<<static_cast<unsigned>(blocks < 65535 ? blocks : 65535), kThreads, 0, stream_>>>(n, op);
    keep(cudaGetLastError());
  }

  void matmul(const MatrixRef& w, const float* x, int64_t rows, float* y) {
    for (int64_t r = 0; r < rows && error_ == cudaSuccess; r += kMaxGemvBatch) {
      const auto batch = static_cast<int32_t>(rows - r < kMaxGemvBatch ? rows - r : kMaxGemvBatch);
      // gemv() has taken the launch's error already; its Status says only
      // that it failed.
      if (!gemv(w.type, w.data, w.rows, w.cols, w.row_bytes, x + r * w.cols, batch, y + r * w.rows, stream_).ok()) {
        keep(cudaErrorLaunchFailure);
      }
    }
  }

  cudaError_t error() const { return error_; }

 private:
  void keep(cudaError_t e) {
    if (error_ == cudaSuccess) error_ = e;
  }

  cudaStream_t stream_;
  cudaError_t error_ = cudaSuccess;
};

}  // namespace

cudaError_t run_forward_on_stream(const GridModel& model, const GridScratch& scratch, const StepView& step,
                                  int64_t rows, int64_t outputs, int64_t partitions, cudaStream_t stream) {
  CudaExec exec(stream);
  run_forward(exec, model, scratch, step, rows, outputs, partitions);
  return exec.error();
}

}  // namespace met::cuda
