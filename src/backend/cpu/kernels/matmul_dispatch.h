// Which matmul kernels each ISA tier provides per weight type, the set this
// process runs (chosen once from selected_isa(): the highest tier at or below
// it with a kernel of its own, else the scalar reference), and the driver that
// runs a kernel over a task in cache-sized pieces. matmul.h's functions are
// this driver over the selected kernels; tests call it with each tier's.
// Threading: any thread (the selected table is a function-local static).
// Tested by tests/backend/matmul_test.cc.
#pragma once

#include <cstdint>

#include "backend/cpu/kernels/matmul.h"
#include "backend/cpu/kernels/matmul_kernels.h"
#include "core/cpu_features.h"

namespace met::cpu {

// The kernels `isa` itself provides for `type` (kScalar: the references);
// null members where that tier has none. Calling a tier the CPU lacks is a
// crash: check best_isa() first.
MatmulKernels matmul_kernels_for_isa(GgmlType type, Isa isa);

// What matmul() and prepare_activations() run for `type`.
const MatmulKernels& selected_matmul_kernels(GgmlType type);

// prepare_activations with the given row kernel (padding zeroed).
void prepare_activations_with(const MatmulKernels& kernels, GgmlType weight_type, const float* x,
                              int64_t x_stride, int64_t cols, int64_t row_begin, int64_t row_end,
                              uint8_t* out);

// matmul with the given kernels (matmul, or matmul_packed for a packed
// w.layout), split into pieces whose activations fit in the per-core cache.
void matmul_with(const MatmulKernels& kernels, const WeightMatrix& w, const uint8_t* act, int64_t m,
                 float* y, int64_t y_stride, int64_t n_begin, int64_t n_end);

}  // namespace met::cpu
