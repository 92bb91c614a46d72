// CUDA device discovery and a self-test kernel: the placeholder that keeps the
// nvcc build path proven until the CUDA backend lands.
// Threading: any thread; each call uses the current device.
// Tested by tests/backend/cuda_device_test.cc (label gpu; skipped without a GPU).
#pragma once

#include <string>

#include "core/status.h"

namespace met::cuda {

// Number of visible CUDA devices; an error (not 0) when the driver is absent.
Result<int> device_count();
// "NVIDIA H200 (sm_90, 139.8 GiB)" for device `index`.
Result<std::string> device_description(int index);
// Runs y[i] = a*x[i] + y[i] on `n` elements on the device and checks the
// result on the host.
Status self_test(int n);

}  // namespace met::cuda
