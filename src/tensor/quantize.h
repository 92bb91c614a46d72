// Row conversion between float and every GGUF tensor type met handles: the
// entry points the loader, the backends, `met quantize` and `met make-model`
// use. Each call runs the fastest kernel this CPU allows (chosen once, see
// row_kernels.h); every kernel matches the scalar reference bit for bit.
// Dequantize: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K,
// Q5_K, Q6_K, Q8_K, MXFP4, IQ4_NL, IQ4_XS. Quantize: F32, F16, BF16, Q8_0, Q4_0,
// Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K, Q8_K, MXFP4, IQ4_NL, IQ4_XS.
// Invariants: on error nothing is written. Rows do not overlap their
// destination. Quantizing inf/NaN into a block type gives unspecified (but
// in-range) codes; F16/BF16 keep NaN as NaN.
// Threading: pure functions, any thread; callers split tensors into rows (or
// row ranges) and run them in parallel. Tested by tests/tensor/quantize_test.cc.
#pragma once

#include <cstdint>
#include <span>

#include "core/status.h"
#include "gguf/ggml_type.h"

namespace met {

bool can_dequantize(GgmlType type);
bool can_quantize(GgmlType type);

// src holds exactly ggml_row_bytes(type, dst.size()) bytes; dst.size() is a
// multiple of the block size. kUnimplemented for a type met cannot decode,
// kInvalidArgument for wrong sizes (the message names the type and sizes).
Status dequantize_row(GgmlType type, std::span<const uint8_t> src, std::span<float> dst);

// dst holds exactly ggml_row_bytes(type, src.size()) bytes; src.size() is a
// multiple of the block size. Errors as for dequantize_row.
Status quantize_row(GgmlType type, std::span<const float> src, std::span<uint8_t> dst);

}  // namespace met
