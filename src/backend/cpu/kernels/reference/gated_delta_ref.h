// Scalar references of the gated delta rule's per-ISA pieces
// (gated_delta_kernels.h): the definition every tier is checked against.
// gated_delta_step follows the recurrence literally (decay the state, read
// kv, update, read the output from the updated state); gated_delta_gemm is
// the plain triple loop, summing in double.
// Threading: pure functions. Tested by tests/backend/gated_delta_test.cc
// (against a double-precision recurrence written in the test).
#pragma once

#include <cstdint>

namespace met::cpu::ref {

void gated_delta_step(const float* q, const float* k, const float* v, float decay, float beta, float scale,
                      int32_t head_dim, float* state, float* out);
void gated_delta_gemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                      float* c, int64_t ldc, bool accumulate, bool lower);

}  // namespace met::cpu::ref
