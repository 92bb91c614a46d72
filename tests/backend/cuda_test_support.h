// What the CUDA backend's gpu tests share: MET_REQUIRE_GPU, which skips the
// test (saying why) where no CUDA device is visible.
// Threading: test bodies. Never linked into apps/.
#pragma once

#include <gtest/gtest.h>

#include "backend/cuda/cuda_device.h"

#define MET_REQUIRE_GPU()                                                                   \
  do {                                                                                      \
    auto met_count_ = ::met::cuda::device_count();                                          \
    if (!met_count_.ok() || *met_count_ == 0) {                                             \
      GTEST_SKIP() << "no CUDA device: "                                                    \
                   << (met_count_.ok() ? "0 devices" : met_count_.status().message());      \
    }                                                                                       \
  } while (0)
