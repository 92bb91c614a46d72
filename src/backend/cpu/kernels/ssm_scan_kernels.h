// The per-ISA pieces behind ssm_scan.h and the table of them this process
// runs (chosen once from selected_isa()):
//   block: a block of rows of the recurrent form, the rows' softplus'd dt
//     and decays already computed (by ssm_scan.cc, shared by every tier);
//   gemm: the chunked form's products, the small blocked gemm the gated
//     delta rule's chunked form uses (gated_delta_kernels.h), shared.
// The declarations use plain types only, so the wider-ISA translation units
// include no header with inline code (see src/tensor/kernels_avx512.cc).
// Threading: pure functions. Tested by tests/backend/ssm_scan_test.cc.
#pragma once

#include <cstdint>

#include "backend/cpu/kernels/gated_delta_kernels.h"
#include "core/cpu_features.h"

namespace met::cpu {

struct SsmScanRows;       // ssm_scan.h
class SsmScanScratch;     // ssm_scan.h

// Rows [0, num_rows) of one head, as SsmScanRows's pointers and strides
// with the per-row scalars precomputed: dt[t] = softplus(dt_raw + dt_bias),
// decay[t] = e^(dt[t] A).
struct SsmScanBlock {
  const float* x;
  int64_t x_stride;
  const float* b;
  int64_t b_stride;
  const float* c;
  int64_t c_stride;
  const float* dt;
  const float* decay;
  float d;
  float* y;
  int64_t y_stride;
  int64_t num_rows;
};

// For each state row p < head_dim (state + p*d_state) and row t in order:
//   S[p][n] = decay[t] S[p][n] + (x_t[p] dt[t]) B_t[n];
//   y_t[p] = sum_n S[p][n] C_t[n] + d x_t[p]   (x_t[p] dt[t] and d x_t[p]
// rounded to float first; the sum's order and the update's contraction are
// the tier's).
using SsmScanBlockFn = void (*)(const SsmScanBlock& block, int32_t head_dim, int32_t d_state, float* state);

struct SsmScanKernels {
  SsmScanBlockFn block = nullptr;
  GatedDeltaGemmFn gemm = nullptr;  // see GatedDeltaGemmFn
};

namespace avx2 {  // ssm_scan_avx2.cc
void ssm_scan_block(const SsmScanBlock& block, int32_t head_dim, int32_t d_state, float* state);
}  // namespace avx2

namespace avx512 {  // ssm_scan_avx512.cc
void ssm_scan_block(const SsmScanBlock& block, int32_t head_dim, int32_t d_state, float* state);
}  // namespace avx512

// The kernels `isa` itself provides (kScalar: the reference in
// kernels/reference/ssm_scan_ref.h and gated_delta_ref.h's gemm); null
// members where that tier has none. Calling a tier the CPU lacks is a crash.
SsmScanKernels ssm_scan_kernels_for_isa(Isa isa);
// What ssm_scan.h runs: per kernel, the highest tier at or below selected_isa().
const SsmScanKernels& selected_ssm_scan_kernels();

// softplus(v): v above 20, else log1p(e^v). Every tier's dt.
float ssm_softplus(float v);

// ssm_scan.h's two forms on the given kernels (tests run each tier).
void ssm_scan_recurrent_with(const SsmScanKernels& kernels, const SsmScanRows& rows, int64_t num_rows,
                             int32_t head_dim, int32_t d_state, float* state);
void ssm_scan_chunked_with(const SsmScanKernels& kernels, const SsmScanRows& rows, int64_t num_rows,
                           int32_t head_dim, int32_t d_state, float* state, SsmScanScratch& scratch);

}  // namespace met::cpu
