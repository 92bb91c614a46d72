// The grid forward pass on a CUDA stream (see cuda_forward.h).
#include "backend/cuda/cuda_forward.h"

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

// The executor forward_program.h runs on: kernels on one stream, the first
// error kept.
class CudaExec {
 public:
  explicit CudaExec(cudaStream_t stream) : stream_(stream) {}

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
      if (!gemv(w.type, w.data, w.rows, w.cols, w.row_bytes, x + r * w.cols, batch, y + r * w.rows, stream_).ok()) {
        keep(cudaGetLastError() == cudaSuccess ? cudaErrorLaunchFailure : cudaGetLastError());
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
