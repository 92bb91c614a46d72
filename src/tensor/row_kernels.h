// RowKernels: which function dequantizes or quantizes a row of each type, per
// ISA tier, and the choice met runs with. The choice is made once, on first
// use, from selected_isa(): per direction, the highest tier at or below it
// that has its own kernel, else the scalar reference.
// Invariants: a type the reference cannot handle has null entries in every
// tier; the selected table never changes after it is built.
// Threading: any thread (the table is a function-local static).
// Tested by tests/tensor/isa_kernels_test.cc and quantize_test.cc.
#pragma once

#include "core/cpu_features.h"
#include "gguf/ggml_type.h"
#include "tensor/reference/reference_kernels.h"

namespace met {

struct RowKernels {
  ref::DequantizeRowFn dequantize = nullptr;
  ref::QuantizeRowFn quantize = nullptr;
};

// The kernels `isa` itself provides for `type` (kScalar: the references);
// null where that tier has no version of its own. Calling a tier the CPU
// lacks is a crash: check selected_isa() first.
RowKernels row_kernels_for_isa(GgmlType type, Isa isa);

// What quantize_row/dequantize_row run for `type`.
const RowKernels& selected_row_kernels(GgmlType type);

}  // namespace met
