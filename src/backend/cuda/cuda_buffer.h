// CUDA errors as met Statuses, and DeviceBuffer<T>: n elements of device
// memory freed on every path. Host code (tests, CudaDevice) includes this
// with the CUDA runtime's headers on its include path; .cu sources too, so
// it stays C++17.
// Threading: a buffer belongs to its owner; calls use the current device.
// Tested through tests/backend/cuda_kernels_test.cc (label gpu).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "core/status.h"

namespace met::cuda {

inline Status cuda_status(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return ok_status();
  return internal_error("{}: {}", what, cudaGetErrorString(err));
}

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept : ptr_(std::exchange(other.ptr_, nullptr)), size_(other.size_) {}
  ~DeviceBuffer() {
    if (ptr_ != nullptr) cudaFree(ptr_);
  }

  static Result<DeviceBuffer> allocate(size_t n) {
    DeviceBuffer b;
    MET_RETURN_IF_ERROR(cuda_status(cudaMalloc(&b.ptr_, n * sizeof(T)), "cudaMalloc"));
    b.size_ = n;
    return b;
  }
  static Result<DeviceBuffer> from(const std::vector<T>& host) {
    MET_ASSIGN_OR_RETURN(DeviceBuffer b, allocate(host.size()));
    MET_RETURN_IF_ERROR(cuda_status(
        cudaMemcpy(b.ptr_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "copy to device"));
    return b;
  }
  // Copies the first host.size() elements back.
  Status copy_to(std::vector<T>& host) const {
    return cuda_status(cudaMemcpy(host.data(), ptr_, host.size() * sizeof(T), cudaMemcpyDeviceToHost),
                       "copy to host");
  }

  T* get() const { return ptr_; }
  size_t size() const { return size_; }

 private:
  T* ptr_ = nullptr;
  size_t size_ = 0;
};

}  // namespace met::cuda
