// Scalar reference kernels of the CPU backend: the definition of what every
// vectorized kernel in kernels/ computes, written for clarity, not speed.
// Matmul: prepared-activation formats as in kernels/matmul_kernels.h; integer
// paths sum exact integer dot products per block, then scale them in float
// (as llama.cpp does); every path accumulates the per-block (or per-element)
// float terms in double, so the reference is the accurate side of a test.
// Ops: plain loops with std::exp/std::sqrt in float, except where noted.
// Threading: pure functions, any thread. Tested by tests/backend/
// matmul_test.cc and ops_test.cc (which also check them on hand-made cases).
#pragma once

#include <cstdint>

#include "backend/cpu/kernels/matmul_kernels.h"
#include "backend/cpu/kernels/ops.h"

namespace met::cpu::ref {

// matmul_ref.cc: prepare one activation row for weights of each family.
void prepare_f32(const float* x, int64_t cols, uint8_t* out);
void prepare_bf16(const float* x, int64_t cols, uint8_t* out);
void prepare_q8_0(const float* x, int64_t cols, uint8_t* out);  // ActQ8_0
void prepare_q8_k(const float* x, int64_t cols, uint8_t* out);

// matmul_ref.cc: one kernel per weight type.
void matmul_f32(const MatmulTask& task);
void matmul_f16(const MatmulTask& task);
void matmul_bf16(const MatmulTask& task);
void matmul_q8_0(const MatmulTask& task);
void matmul_q4_0(const MatmulTask& task);
void matmul_mxfp4(const MatmulTask& task);  // ActQ8_0 activations
void matmul_q4_k(const MatmulTask& task);
void matmul_q5_k(const MatmulTask& task);
void matmul_q2_k(const MatmulTask& task);
void matmul_q3_k(const MatmulTask& task);
void matmul_q5_0(const MatmulTask& task);
void matmul_q4_1(const MatmulTask& task);
void matmul_q5_1(const MatmulTask& task);
void matmul_iq4_nl(const MatmulTask& task);
void matmul_iq4_xs(const MatmulTask& task);
void matmul_q6_k(const MatmulTask& task);

// ops_ref.cc
void rms_norm(const float* x, const float* weight, int64_t n, float eps, float* out);
void rope(float* x, int32_t num_heads, int32_t pos, const RopeParams& p);
// The angles of `pos` for rope: cos_sin[2 i], cos_sin[2 i + 1] are the cos and
// sin (times YaRN's mscale) of pair i < rope_dims / 2. Every tier uses it.
void rope_cache(int32_t pos, const RopeParams& p, float* cos_sin);
// Rotates dims [0, rope_dims) of each head by the table (scalar).
void rope_rotate(float* x, int32_t num_heads, int32_t head_dim, int32_t rope_dims, bool neox,
                 const float* cos_sin);
void swiglu(const float* gate, const float* up, int64_t n, float* out);
// gpt-oss's clamped SwiGLU (ops.h's swiglu_oai).
void swiglu_oai(const float* gate, const float* up, int64_t n, float* out);
void add(const float* a, const float* b, int64_t n, float* out);
void softmax(float* x, int64_t n);
int64_t argmax(const float* x, int64_t n);
// Sums of squares in double; silu(z) = z / (1 + e^-z) with std::exp.
void rms_norm_gated(const float* x, const float* weight, const float* z, int64_t n, float eps, float* out);
void l2_norm(float* x, int64_t n, float eps);

}  // namespace met::cpu::ref
