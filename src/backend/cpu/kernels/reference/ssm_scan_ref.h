// Scalar reference of the selective scan's per-ISA block
// (ssm_scan_kernels.h): the definition every tier is checked against,
// ggml_ssm_scan's float operations in its order: per row t and state row p,
// x_dt = x_t[p] dt[t]; S[p][n] = S[p][n] decay[t] + B_t[n] x_dt (each product
// rounded, no contraction); y_t[p] = the float sum over n in order of
// S[p][n] C_t[n], plus d x_t[p].
// Threading: pure function. Tested by tests/backend/ssm_scan_test.cc
// (against a double-precision recurrence written in the test).
#pragma once

#include <cstdint>

#include "backend/cpu/kernels/ssm_scan_kernels.h"

namespace met::cpu::ref {

void ssm_scan_block(const SsmScanBlock& block, int32_t head_dim, int32_t d_state, float* state);

}  // namespace met::cpu::ref
