// LoRA kernels (Punica/S-LoRA's shrink and expand): an adapted matrix adds
// scale · B·(A·x) to W·x. A step's rows are grouped by adapter, so each
// adapter's A and B are streamed once per group of rows:
//   lora_shrink: t[i][k] = sum_c a[k][c] · x_i[c] for k < rank, for each of
//     the group's rows i (x_i at x + row_i · x_stride, t_i at t + row_i ·
//     t_stride);
//   lora_expand: y_i[o] += scale · sum_k t_i[k] · B[o][k] for o in
//     [o_begin, o_end), B given in panels of 16 outputs (bp; the layout of
//     backend/lora_adapter.h's lora_panel_index).
// A and B are F32, or with `f16` F16 bits (converted exactly to F32 as they
// are read). Shrink sums each dot product in float over c, expand over k in order
// (k = 0 first), each row independently of the group's others (batch
// invariance: a row's result never depends on its neighbours).
// Threading: pure functions; threads split shrink by rows and expand by
// output columns. Tested by tests/backend/lora_kernels_test.cc.
#pragma once

#include <cstdint>
#include <span>

namespace met::cpu {

// REQUIRES: rank >= 1; every row's x and t in range.
void lora_shrink(const void* a, bool f16, int32_t rank, int64_t cols, const float* x, int64_t x_stride,
                 std::span<const int32_t> rows, float* t, int64_t t_stride);

// REQUIRES: rank >= 1, 0 <= o_begin <= o_end <= out_cols.
void lora_expand(const void* bp, bool f16, int32_t rank, int64_t out_cols, float scale, const float* t, int64_t t_stride,
                 std::span<const int32_t> rows, float* y, int64_t y_stride, int64_t o_begin, int64_t o_end);

}  // namespace met::cpu
