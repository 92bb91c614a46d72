// The per-ISA LoRA kernels behind lora.h and the ones this process runs
// (chosen once from selected_isa()). Plain declarations only, so the
// wider-ISA translation units include no header with inline code.
// Threading: pure functions. Tested by tests/backend/lora_kernels_test.cc.
#pragma once

#include <cstdint>

#include "core/cpu_features.h"

namespace met::cpu {

// lora.h's contracts over rows[0, num_rows), checked by the caller.
using LoraShrinkFn = void (*)(const void* a, bool f16, int32_t rank, int64_t cols, const float* x, int64_t x_stride,
                              const int32_t* rows, int64_t num_rows, float* t, int64_t t_stride);
using LoraExpandFn = void (*)(const void* bp, bool f16, int32_t rank, int64_t out_cols, float scale, const float* t,
                              int64_t t_stride, const int32_t* rows, int64_t num_rows, float* y, int64_t y_stride,
                              int64_t o_begin, int64_t o_end);

struct LoraKernels {
  LoraShrinkFn shrink = nullptr;
  LoraExpandFn expand = nullptr;
};

#define MET_LORA_KERNELS_DECL                                                                               \
  void lora_shrink(const void* a, bool f16, int32_t rank, int64_t cols, const float* x, int64_t x_stride, \
                   const int32_t* rows, int64_t num_rows, float* t, int64_t t_stride);                    \
  void lora_expand(const void* bp, bool f16, int32_t rank, int64_t out_cols, float scale, const float* t, \
                   int64_t t_stride, const int32_t* rows, int64_t num_rows, float* y, int64_t y_stride,    \
                   int64_t o_begin, int64_t o_end);

namespace ref {  // reference/lora_ref.cc
MET_LORA_KERNELS_DECL
}  // namespace ref
namespace avx2 {  // lora_avx2.cc
MET_LORA_KERNELS_DECL
}  // namespace avx2
namespace avx512 {  // lora_avx512.cc
MET_LORA_KERNELS_DECL
}  // namespace avx512

#undef MET_LORA_KERNELS_DECL

// The kernels `isa` itself provides (kScalar: the reference); nulls where
// it has none. Calling a tier the CPU lacks is a crash.
LoraKernels lora_kernels_for_isa(Isa isa);
// What lora.h runs: the highest tier at or below selected_isa().
const LoraKernels& selected_lora_kernels();

}  // namespace met::cpu
