// The RoPE angle table the CUDA backend rotates by (rope_hd.h): built on the
// host at load with the CPU's own rope_cache, so both devices use the very
// same cos and sin. Row p (position p) holds rope_dims / 2 (cos, sin) pairs.
// Threading: pure function. Tested by tests/backend/cuda_math_test.cc.
#pragma once

#include <cstdint>
#include <vector>

#include "backend/cpu/kernels/ops.h"

namespace met::cuda {

// Positions [0, positions) of `params`' angles.
std::vector<float> rope_table(const cpu::RopeParams& params, int32_t positions);

}  // namespace met::cuda
