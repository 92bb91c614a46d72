// The per-ISA pieces behind gated_delta.h and the table of them this
// process runs (chosen once from selected_isa()):
//   step: one token of the recurrence on the transposed state (the whole
//     recurrent form is a loop over it; exp(g) comes in as `decay`).
//   gemm: c = [c +] a b on small row-major blocks, the chunked form's
//     products (its exps, cumulative sums and triangular inverse are scalar,
//     in gated_delta.cc, shared by every tier).
// The declarations use plain types only, so the wider-ISA translation units
// include no header with inline code (see src/tensor/kernels_avx512.cc).
// Threading: pure functions. Tested by tests/backend/gated_delta_test.cc.
#pragma once

#include <cstdint>

#include "core/cpu_features.h"

namespace met::cpu {

struct GatedDeltaRows;     // gated_delta.h
class GatedDeltaScratch;  // gated_delta.h

// One token: state (transposed, state[j*head_dim + i] = S[i][j]) decays by
// `decay`, takes the delta-rule update with k, v, beta, and out[j] =
// scale * sum_i S[i][j] q[i] of the updated state.
using GatedDeltaStepFn = void (*)(const float* q, const float* k, const float* v, float decay, float beta,
                                  float scale, int32_t head_dim, float* state, float* out);

// c[r][0:n] = (accumulate ? c[r][0:n] : 0) + sum_{x < kend(r)} a[r][x] * b[x][0:n]
// for r < m, with a[r][x] at a + r*lda + x, b[x][col] at b + x*ldb + col and
// c[r][col] at c + r*ldc + col. kend(r) = k, or min(k, r + 1) when `lower`
// (a is lower triangular; entries above its diagonal are never read).
using GatedDeltaGemmFn = void (*)(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                                  int64_t ldb, float* c, int64_t ldc, bool accumulate, bool lower);

struct GatedDeltaKernels {
  GatedDeltaStepFn step = nullptr;
  GatedDeltaGemmFn gemm = nullptr;
};

namespace avx2 {  // gated_delta_avx2.cc
void gated_delta_step(const float* q, const float* k, const float* v, float decay, float beta, float scale,
                      int32_t head_dim, float* state, float* out);
void gated_delta_gemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                      float* c, int64_t ldc, bool accumulate, bool lower);
}  // namespace avx2

namespace avx512 {  // gated_delta_avx512.cc
void gated_delta_step(const float* q, const float* k, const float* v, float decay, float beta, float scale,
                      int32_t head_dim, float* state, float* out);
void gated_delta_gemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                      float* c, int64_t ldc, bool accumulate, bool lower);
}  // namespace avx512

// The kernels `isa` itself provides (kScalar: the references in
// kernels/reference/gated_delta_ref.h); null members where that tier has
// none. Calling a tier the CPU lacks is a crash.
GatedDeltaKernels gated_delta_kernels_for_isa(Isa isa);
// What gated_delta.h runs: per kernel, the highest tier at or below selected_isa().
const GatedDeltaKernels& selected_gated_delta_kernels();

// gated_delta.h's two forms on the given kernels (tests run each tier).
void gated_delta_recurrent_with(const GatedDeltaKernels& kernels, const GatedDeltaRows& rows, int64_t num_rows,
                                int32_t head_dim, float* state);
void gated_delta_chunked_with(const GatedDeltaKernels& kernels, const GatedDeltaRows& rows, int64_t num_rows,
                              int32_t head_dim, float* state, GatedDeltaScratch& scratch);

}  // namespace met::cpu
