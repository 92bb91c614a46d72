// The block-wide reduction the CUDA kernels share: every thread's value
// combined by `op` in a fixed tree order (the same bits whatever else the
// launch holds), the result returned to every thread. A barrier before
// and after, so a kernel may call it again at once; every thread of the
// block must call it.
// C++17, CUDA sources only. Threading: one block.
// Tested through the kernels that use it (tests/model/cuda_grid_test.cc).
#pragma once

namespace met::cuda {

template <int kThreads, class T, class Op>
__device__ T block_reduce(T value, Op op) {
  static_assert((kThreads & (kThreads - 1)) == 0, "a power of two");
  __shared__ T slots[kThreads];
  const int tid = static_cast<int>(threadIdx.x);
  slots[tid] = value;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (tid < half) slots[tid] = op(slots[tid], slots[tid + half]);
    __syncthreads();
  }
  const T result = slots[0];
  __syncthreads();
  return result;
}

}  // namespace met::cuda
