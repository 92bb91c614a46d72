// Tests for the CUDA placeholder (src/backend/cuda/cuda_device.h). Label gpu:
// each test skips, saying why, where no CUDA device is visible.
#include "backend/cuda/cuda_device.h"

#include <gtest/gtest.h>

#include "cuda_test_support.h"

namespace met::cuda {
namespace {

TEST(CudaDevice, DescribesDeviceZero) {
  MET_REQUIRE_GPU();
  auto d = device_description(0);
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  EXPECT_NE(d->find("sm_"), std::string::npos);
}

TEST(CudaDevice, SelfTestKernelComputesSaxpy) {
  MET_REQUIRE_GPU();
  Status s = self_test(100003);
  EXPECT_TRUE(s.ok()) << s.to_string();
}

}  // namespace
}  // namespace met::cuda
