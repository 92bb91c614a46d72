// The grid forward pass on a CUDA stream (see cuda_forward.h).
#include "backend/cuda/cuda_forward.h"

#include "backend/cuda/attention_kernels.h"
#include "backend/cuda/block_reduce.h"
#include "backend/cuda/gemv.h"

namespace met::cuda {
namespace {

constexpr int kThreads = 256;       // a thread per index
constexpr int kRowThreads = 1024;   // a block per row: norms, argmax

template <class Op>
__global__ void apply_kernel(int64_t n, Op op) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    op(i);
  }
}

// A candidate maximum of a logits row.
struct Best {
  float value;
  long long index;  // -1: none
};

// Output o's bans, then its argmax, a block per output: each thread scans
// a stride keeping its first maximum (NaN skipped), then a tree reduction
// keeps the larger value, the smaller index on a tie: the serial rule's
// first maximum (BanArgmaxOp).
__global__ void __launch_bounds__(kRowThreads) ban_argmax_kernel(BanArgmaxOp op) {
  const int64_t o = blockIdx.x;
  const int tid = static_cast<int>(threadIdx.x);
  float* row = op.logits + o * op.vocab;
  const PackedOutput out = op.step.outputs[o];
  for (int k = tid; k < out.num_banned; k += kRowThreads) row[op.step.banned[out.banned_begin + k]] = -INFINITY;
  __syncthreads();
  Best best{0.0f, -1};
  for (int64_t t = tid; t < op.vocab; t += kRowThreads) {
    const float v = row[t];
    if (v != v) continue;
    if (best.index < 0 || v > best.value) best = {v, t};
  }
  best = block_reduce<kRowThreads>(best, [](Best a, Best b) {
    if (b.index >= 0 && (a.index < 0 || b.value > a.value || (b.value == a.value && b.index < a.index))) return b;
    return a;
  });
  if (tid == 0) op.argmax[o] = static_cast<int32_t>(best.index < 0 ? 0 : best.index);
}

// out = row * w / rms(row), a block per row: sums of squares in double over
// each thread's stride, then a block sum. Each thread writes only the
// elements it read, so `out` may be `row`.
__device__ void rms_norm_block(const float* row, const float* w, int64_t width, float eps, float* out) {
  double sum = 0.0;
  for (int64_t c = threadIdx.x; c < width; c += kRowThreads) sum += static_cast<double>(row[c]) * row[c];
  sum = block_reduce<kRowThreads>(sum, [](double a, double b) { return a + b; });
  const auto mean = static_cast<float>(sum / static_cast<double>(width));
  const float scale = 1.0f / sqrtf(mean + eps);
  for (int64_t c = threadIdx.x; c < width; c += kRowThreads) out[c] = row[c] * scale * w[c];
}

// RMSNorm, a block per row (RmsNormOp).
__global__ void __launch_bounds__(kRowThreads) rms_norm_kernel(RmsNormOp op) {
  const int64_t r = blockIdx.x;
  const int64_t src = op.outputs == nullptr ? r : op.outputs[r].row;
  rms_norm_block(op.x + src * op.width, op.w, op.width, op.eps, op.out + r * op.width);
}

// The residual add fused with the next norm, a block per row: each thread
// adds its stride of the row, then rms_norm_block reads those same
// elements (AddNormOp).
__global__ void __launch_bounds__(kRowThreads) add_norm_kernel(AddNormOp op) {
  const int64_t r = blockIdx.x;
  float* row = op.x + r * op.width;
  const float* add = op.t + r * op.width;
  for (int64_t c = threadIdx.x; c < op.width; c += kRowThreads) row[c] = row[c] + add[c];
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
    ban_argmax_kernel<<<static_cast<unsigned>(n), kRowThreads, 0, stream_>>>(op);
    keep(cudaGetLastError());
  }

  void for_each(int64_t n, const AddNormOp& op) {
    if (n == 0 || error_ != cudaSuccess) return;
    add_norm_kernel<<<static_cast<unsigned>(n), kRowThreads, 0, stream_>>>(op);
    keep(cudaGetLastError());
  }

  void for_each(int64_t n, const RmsNormOp& op) {
    if (n == 0 || error_ != cudaSuccess) return;
    rms_norm_kernel<<<static_cast<unsigned>(n), kRowThreads, 0, stream_>>>(op);
    keep(cudaGetLastError());
  }

  void for_each(int64_t n, const QkPostOp& op) {
    if (n > 0 && error_ == cudaSuccess) keep(launch_qk_post(op, n, stream_));
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
                                  const StepCounts& counts, cudaStream_t stream) {
  CudaExec exec(stream);
  run_forward(exec, model, scratch, step, counts);
  return exec.error();
}

}  // namespace met::cuda
