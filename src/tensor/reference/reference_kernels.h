// Scalar reference kernels: dequantize and quantize one row of a ggml type.
// These define met's arithmetic; every ISA-specific kernel (kernels_avx2.cc,
// kernels_avx512.cc, scale_search_avx2.cc) is tested bit for bit against them.
// Contract for every row kernel: `num_elements` is a multiple of the type's
// block size, `src`/`dst` hold a whole row (ggml_row_bytes bytes for the
// quantized side) and do not overlap. No alignment is required. Callers
// validate sizes (quantize.cc); these only DCHECK.
// Quantizers expect finite input: inf/NaN give unspecified codes, never UB
// (F32/F16/BF16 keep NaN as NaN).
// Rounding to an integer code is round-half-to-even everywhere (what the
// vector instructions do).
// Threading: pure functions, any thread. Tested by tests/tensor/
// dequantize_legacy_ref_test.cc, dequantize_k_ref_test.cc, quantize_ref_test.cc.
#pragma once

#include <cstdint>

namespace met::ref {

using DequantizeRowFn = void (*)(const uint8_t* src, float* dst, int64_t num_elements);
using QuantizeRowFn = void (*)(const float* src, uint8_t* dst, int64_t num_elements);

// dequantize_legacy_ref.cc
void dequantize_row_f32(const uint8_t* src, float* dst, int64_t num_elements);
void dequantize_row_f16(const uint8_t* src, float* dst, int64_t num_elements);
void dequantize_row_bf16(const uint8_t* src, float* dst, int64_t num_elements);
void dequantize_row_q4_0(const uint8_t* src, float* dst, int64_t num_elements);
void dequantize_row_q4_1(const uint8_t* src, float* dst, int64_t num_elements);
void dequantize_row_q5_0(const uint8_t* src, float* dst, int64_t num_elements);
void dequantize_row_q5_1(const uint8_t* src, float* dst, int64_t num_elements);
void dequantize_row_q8_0(const uint8_t* src, float* dst, int64_t num_elements);

// dequantize_k_ref.cc
void dequantize_row_q2_k(const uint8_t* src, float* dst, int64_t num_elements);
void dequantize_row_q3_k(const uint8_t* src, float* dst, int64_t num_elements);
void dequantize_row_q4_k(const uint8_t* src, float* dst, int64_t num_elements);
void dequantize_row_q5_k(const uint8_t* src, float* dst, int64_t num_elements);
void dequantize_row_q6_k(const uint8_t* src, float* dst, int64_t num_elements);
void dequantize_row_q8_k(const uint8_t* src, float* dst, int64_t num_elements);

// quantize_legacy_ref.cc
void quantize_row_f32(const float* src, uint8_t* dst, int64_t num_elements);
void quantize_row_f16(const float* src, uint8_t* dst, int64_t num_elements);
void quantize_row_bf16(const float* src, uint8_t* dst, int64_t num_elements);
// d = max|x| / 127, q = round(x / d) (computed as x * (1 / d)).
void quantize_row_q8_0(const float* src, uint8_t* dst, int64_t num_elements);
// d = -(the x of largest magnitude) / 8, q = clamp(round(x / d) + 8, 0, 15).
void quantize_row_q4_0(const float* src, uint8_t* dst, int64_t num_elements);
// d = -(the x of largest magnitude) / 16, q = clamp(round(x / d) + 16, 0, 31).
void quantize_row_q5_0(const float* src, uint8_t* dst, int64_t num_elements);
// m = min x, d = (max x - m) / 15 (Q4_1) or / 31 (Q5_1), q = round((x - m) / d).
void quantize_row_q4_1(const float* src, uint8_t* dst, int64_t num_elements);
void quantize_row_q5_1(const float* src, uint8_t* dst, int64_t num_elements);

// quantize_k_ref.cc: sub-block scales from the searches in k_quantizer.h,
// then quantized to 4 (Q2_K), 6 (Q3_K, Q4_K, Q5_K) or 8 (Q6_K) bits against an
// fp16 super-scale.
void quantize_row_q2_k(const float* src, uint8_t* dst, int64_t num_elements);
void quantize_row_q3_k(const float* src, uint8_t* dst, int64_t num_elements);
void quantize_row_q4_k(const float* src, uint8_t* dst, int64_t num_elements);
void quantize_row_q5_k(const float* src, uint8_t* dst, int64_t num_elements);
void quantize_row_q6_k(const float* src, uint8_t* dst, int64_t num_elements);
// d = max|x| / 127 as a float, q = round(x / d), bsums filled.
void quantize_row_q8_k(const float* src, uint8_t* dst, int64_t num_elements);

// mxfp4_ref.cc: ggml's MXFP4 codec (E8M0 exponent from the block's largest
// magnitude, nearest E2M1 code per element).
void dequantize_row_mxfp4(const uint8_t* src, float* dst, int64_t num_elements);
void quantize_row_mxfp4(const float* src, uint8_t* dst, int64_t num_elements);

// iq4_ref.cc: ggml's IQ4_NL and IQ4_XS codecs. The encoders search each
// group's scale as llama-quantize does without an importance matrix
// (weights x^2, seven steps either side of -max / 127), IQ4_XS then fits the
// group scales to 6 bits against an fp16 super-scale.
void dequantize_row_iq4_nl(const uint8_t* src, float* dst, int64_t num_elements);
void dequantize_row_iq4_xs(const uint8_t* src, float* dst, int64_t num_elements);
void quantize_row_iq4_nl(const float* src, uint8_t* dst, int64_t num_elements);
void quantize_row_iq4_xs(const float* src, uint8_t* dst, int64_t num_elements);

// The group scale searches inside quantize_row_q4_k / q6_k, exposed so tests
// can compare vector versions on their continuous outputs (a difference in
// the last bit of a scale rarely changes the packed bytes).
struct ScaleMinFit {
  float scale;
  float min;  // >= 0: x ~ scale * q - min
};
// 32 values, q in 0..15.
ScaleMinFit fit_q4_k_group(const float* x);
// 16 values, x ~ scale * q with q in -32..31; the scale may be negative.
float fit_q6_k_group(const float* x);

}  // namespace met::ref
