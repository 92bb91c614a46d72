// Row kernels built for one ISA tier each, with the same contract as the
// scalar references in reference/reference_kernels.h, whose results they
// reproduce bit for bit. Declarations only: this header pulls in no intrinsics,
// so baseline code may include it, but it must call a tier's functions only
// when selected_isa() is at least that tier (row_kernels.cc does the choosing).
//   met::avx2   - kernels_avx2.cc, kernels_avx2_k.cc (-march=x86-64-v3)
//   met::avx512 - kernels_avx512.cc (-march=x86-64-v4 + VNNI + BF16)
// Threading: pure functions. Tested by tests/tensor/isa_kernels_test.cc.
#pragma once

#include <cstdint>

#include "tensor/reference/reference_kernels.h"

namespace met::avx2 {

void dequantize_row_f16(const uint8_t* src, float* dst, int64_t num_elements);
void dequantize_row_bf16(const uint8_t* src, float* dst, int64_t num_elements);
void dequantize_row_q8_0(const uint8_t* src, float* dst, int64_t num_elements);
void quantize_row_f16(const float* src, uint8_t* dst, int64_t num_elements);
void quantize_row_bf16(const float* src, uint8_t* dst, int64_t num_elements);
void quantize_row_q8_0(const float* src, uint8_t* dst, int64_t num_elements);
void quantize_row_q2_k(const float* src, uint8_t* dst, int64_t num_elements);
void quantize_row_q3_k(const float* src, uint8_t* dst, int64_t num_elements);
void quantize_row_q4_k(const float* src, uint8_t* dst, int64_t num_elements);
void quantize_row_q5_k(const float* src, uint8_t* dst, int64_t num_elements);
void quantize_row_q6_k(const float* src, uint8_t* dst, int64_t num_elements);
// The group searches inside the two above (see ref::fit_q4_k_group).
ref::ScaleMinFit fit_q4_k_group(const float* x);
float fit_q6_k_group(const float* x);

}  // namespace met::avx2

namespace met::avx512 {

void dequantize_row_f16(const uint8_t* src, float* dst, int64_t num_elements);
void dequantize_row_bf16(const uint8_t* src, float* dst, int64_t num_elements);
void dequantize_row_q8_0(const uint8_t* src, float* dst, int64_t num_elements);
void quantize_row_f16(const float* src, uint8_t* dst, int64_t num_elements);
void quantize_row_bf16(const float* src, uint8_t* dst, int64_t num_elements);
void quantize_row_q8_0(const float* src, uint8_t* dst, int64_t num_elements);

}  // namespace met::avx512
