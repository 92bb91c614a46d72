// The vectorized row kernels behind ops.h, per ISA tier, and the table of
// them this process runs (chosen once from selected_isa()). RoPE is split in
// two: the cos/sin table of a position (scalar, ref::rope_cache, shared by
// every tier so all agree on the angles) and the rotation (vectorized).
// The per-tier declarations use plain types only, so the wider-ISA
// translation units include no header with inline code (see
// src/tensor/kernels_avx512.cc).
// Threading: pure functions. Tested by tests/backend/ops_test.cc.
#pragma once

#include <cstdint>

#include "core/cpu_features.h"

namespace met::cpu {

struct OpsKernels {
  void (*rms_norm)(const float* x, const float* weight, int64_t n, float eps, float* out) = nullptr;
  // Rotates dims [0, rope_dims) of each head with the table from
  // ref::rope_cache: cos_sin[2 i] = cos, cos_sin[2 i + 1] = sin of pair i.
  void (*rope_rotate)(float* x, int32_t num_heads, int32_t head_dim, int32_t rope_dims, bool neox,
                      const float* cos_sin) = nullptr;
  void (*swiglu)(const float* gate, const float* up, int64_t n, float* out) = nullptr;
  void (*add)(const float* a, const float* b, int64_t n, float* out) = nullptr;
  void (*softmax)(float* x, int64_t n) = nullptr;
  int64_t (*argmax)(const float* x, int64_t n) = nullptr;
  void (*rms_norm_gated)(const float* x, const float* weight, const float* z, int64_t n, float eps,
                         float* out) = nullptr;
  void (*l2_norm)(float* x, int64_t n, float eps) = nullptr;
  void (*swiglu_oai)(const float* gate, const float* up, int64_t n, float* out) = nullptr;
};

namespace avx2 {  // ops_avx2.cc
void rms_norm(const float* x, const float* weight, int64_t n, float eps, float* out);
void rope_rotate(float* x, int32_t num_heads, int32_t head_dim, int32_t rope_dims, bool neox,
                 const float* cos_sin);
void swiglu(const float* gate, const float* up, int64_t n, float* out);
void add(const float* a, const float* b, int64_t n, float* out);
void softmax(float* x, int64_t n);
int64_t argmax(const float* x, int64_t n);
void rms_norm_gated(const float* x, const float* weight, const float* z, int64_t n, float eps, float* out);
void l2_norm(float* x, int64_t n, float eps);
void swiglu_oai(const float* gate, const float* up, int64_t n, float* out);
}  // namespace avx2

namespace avx512 {  // ops_avx512.cc
void rms_norm(const float* x, const float* weight, int64_t n, float eps, float* out);
void rope_rotate(float* x, int32_t num_heads, int32_t head_dim, int32_t rope_dims, bool neox,
                 const float* cos_sin);
void swiglu(const float* gate, const float* up, int64_t n, float* out);
void add(const float* a, const float* b, int64_t n, float* out);
void softmax(float* x, int64_t n);
int64_t argmax(const float* x, int64_t n);
void rms_norm_gated(const float* x, const float* weight, const float* z, int64_t n, float eps, float* out);
void l2_norm(float* x, int64_t n, float eps);
void swiglu_oai(const float* gate, const float* up, int64_t n, float* out);
}  // namespace avx512

// The kernels `isa` itself provides (kScalar: the references); null members
// where that tier has none. Calling a tier the CPU lacks is a crash.
OpsKernels ops_kernels_for_isa(Isa isa);
// What ops.h runs: per kernel, the highest tier at or below selected_isa().
const OpsKernels& selected_ops_kernels();

}  // namespace met::cpu
