// RoPE on the CUDA backend: the angles come from a table the host fills once
// at load with the CPU's own rope_cache (cpu/kernels/reference), so both
// devices rotate by the very same cos and sin; the device does only the
// rotation, the reference's rope_rotate one pair at a time.
// Table layout: position p's row holds rope_dims / 2 (cos, sin) pairs at
// [p * rope_dims, (p + 1) * rope_dims).
// rope_table.h builds the table (host code).
// Threading: pure functions. Tested by tests/backend/cuda_math_test.cc.
#pragma once

#include <cstdint>

#include "backend/hd.h"

namespace met::cuda {

// Rotates pair `pair` (< rope_dims / 2) of one head in place by the pair's
// (cos, sin) at cos_sin[2 pair], [2 pair + 1]: adjacent elements (2i, 2i+1)
// or, NeoX style, (i, i + rope_dims / 2). Plain products, no contraction.
MET_HD inline void rope_rotate_pair(float* head, int32_t pair, int32_t rope_dims, bool neox,
                                    const float* cos_sin) {
  const int32_t half = rope_dims / 2;
  float* first = neox ? head + pair : head + 2 * pair;
  float* second = neox ? head + pair + half : head + 2 * pair + 1;
  const float c = cos_sin[2 * pair], s = cos_sin[2 * pair + 1];
  const float x0 = *first, x1 = *second;
  *first = x0 * c - x1 * s;
  *second = x0 * s + x1 * c;
}

}  // namespace met::cuda
