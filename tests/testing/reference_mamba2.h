// The Mamba2 pieces of the reference forward, in double precision, token by
// token from their definitions (llama.cpp's build_mamba2_layer and ggml's
// ssm_scan are the facts they follow):
//   ssm_scan: per head h of `head_dim` values, reading B and C of group
//     h / (num_heads / num_groups), with dt = softplus(dt_raw + dt_bias):
//       S[p][n] ← e^(dt·A) S[p][n] + dt·x[p]·B[n];  y[p] = Σ_n S[p][n]·C[n] + D·x[p].
// ReferenceForward's Mamba2 layers (reference_mamba2.cc) are built from it
// and short_conv (reference_recurrent.h): in_proj split into z, xBC and dt;
// the conv from a zero state plus its bias, then SiLU; the scan from a zero
// state; y·silu(z) RMS-normed per group with ssm_norm; ssm_out.
// Threading: pure functions. Never linked into apps/.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "testing/reference_math.h"

namespace met::testing {

struct SsmScanShape {
  size_t num_heads = 0;
  size_t head_dim = 0;
  size_t num_groups = 0;  // divides num_heads
  size_t d_state = 0;
};

// The scan over T tokens: x (T × num_heads·head_dim), b and c (T ×
// num_groups·d_state), dt (T × num_heads, before dt_bias); a, d and dt_bias
// per head; `state` (num_heads × head_dim × d_state, S[h][p][n]) is read and
// updated. Returns y (T × num_heads·head_dim).
Rows ssm_scan(const SsmScanShape& shape, const Rows& x, const Rows& b, const Rows& c, const Rows& dt,
              std::span<const float> dt_bias, std::span<const float> a, std::span<const float> d,
              std::vector<double>& state);

}  // namespace met::testing
