// CUDA device discovery and self-test. Tested by tests/backend/cuda_device_test.cc.
#include "backend/cuda/cuda_device.h"

#include <cuda_runtime.h>

#include "backend/cuda/cuda_buffer.h"

#include <cmath>
#include <vector>

namespace met::cuda {
namespace {

__global__ void saxpy_kernel(int n, float a, const float* x, float* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

}  // namespace

Result<int> device_count() {
  int count = 0;
  MET_RETURN_IF_ERROR(cuda_status(cudaGetDeviceCount(&count), "cudaGetDeviceCount"));
  return count;
}

Result<std::string> device_description(int index) {
  cudaDeviceProp prop{};
  MET_RETURN_IF_ERROR(cuda_status(cudaGetDeviceProperties(&prop, index), "cudaGetDeviceProperties"));
  return fmt::format("{} (sm_{}{}, {:.1f} GiB)", prop.name, prop.major, prop.minor,
                     static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0));
}

// Device memory freed on every path.
class DeviceFloats {
 public:
  DeviceFloats() = default;
  DeviceFloats(const DeviceFloats&) = delete;
  DeviceFloats& operator=(const DeviceFloats&) = delete;
  ~DeviceFloats() {
    if (ptr_ != nullptr) cudaFree(ptr_);
  }
  Status allocate(size_t n) { return cuda_status(cudaMalloc(&ptr_, n * sizeof(float)), "cudaMalloc"); }
  float* get() const { return ptr_; }

 private:
  float* ptr_ = nullptr;
};

Status self_test(int n) {
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i), y[i] = 1.0f;
  const size_t bytes = sizeof(float) * static_cast<size_t>(n);
  DeviceFloats dx, dy;
  MET_RETURN_IF_ERROR(dx.allocate(n));
  MET_RETURN_IF_ERROR(dy.allocate(n));
  MET_RETURN_IF_ERROR(cuda_status(cudaMemcpy(dx.get(), x.data(), bytes, cudaMemcpyHostToDevice), "copy x"));
  MET_RETURN_IF_ERROR(cuda_status(cudaMemcpy(dy.get(), y.data(), bytes, cudaMemcpyHostToDevice), "copy y"));
  saxpy_kernel<<<(n + 255) / 256, 256>>>(n, 2.0f, dx.get(), dy.get());
  MET_RETURN_IF_ERROR(cuda_status(cudaGetLastError(), "saxpy launch"));
  MET_RETURN_IF_ERROR(cuda_status(cudaMemcpy(y.data(), dy.get(), bytes, cudaMemcpyDeviceToHost), "copy back"));
  for (int i = 0; i < n; ++i) {
    if (y[i] != 2.0f * static_cast<float>(i) + 1.0f) {
      return internal_error("self-test mismatch at {}: {} != {}", i, y[i], 2.0f * i + 1.0f);
    }
  }
  return ok_status();
}

}  // namespace met::cuda
