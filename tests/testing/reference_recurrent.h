// The recurrent pieces of the reference forward, in double precision, token
// by token from their definitions (llama.cpp's ggml ops ssm_conv and
// gated_delta_net are the facts they follow):
//   short_conv: a causal depthwise convolution with a rolling state; channel
//     c's output at token t is sum_j kernel[c][j] · x[t - (d_conv - 1) + j][c],
//     inputs before the first token read from the state (the last d_conv - 1
//     inputs of each channel, oldest first), which is left holding the last
//     d_conv - 1 inputs.
//   gated_delta_rule: per value head h reading key head h % num_k_heads
//     (qwen3next: h / (num_v_heads / num_k_heads)), with
//     S (head_dim × head_dim, S[i][j]: key dim i, value dim j):
//       S ← exp(g)·S;  δ = β·(v − Sᵀk);  S ← S + k δᵀ;  o = Sᵀq / sqrt(head_dim).
// ReferenceForward's gated delta layers are built from these; kernel tests
// may check scalar twins against them directly.
// Threading: pure functions. Never linked into apps/.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "testing/reference_math.h"

namespace met::testing {

// Rows x (T × channels) through the convolution with `kernel` (channels ×
// d_conv, d_conv fastest: the last tap multiplies the current input);
// `state` (channels × (d_conv − 1)) is read and updated.
Rows short_conv(std::span<const float> kernel, size_t d_conv, const Rows& x, std::vector<double>& state);

struct GatedDeltaShape {
  size_t num_k_heads = 0;
  size_t num_v_heads = 0;  // a multiple of num_k_heads
  size_t head_dim = 0;     // of keys and values
  bool grouped = false;    // a key head's value heads adjacent (qwen3next), not tiled (qwen35)
};

// The rule over T tokens: q, k (T × num_k_heads·head_dim), v (T ×
// num_v_heads·head_dim), g (log decay) and beta (T × num_v_heads); `state`
// (num_v_heads × head_dim × head_dim, S[h][i][j]) is read and updated.
// Returns o (T × num_v_heads·head_dim).
Rows gated_delta_rule(const GatedDeltaShape& shape, const Rows& q, const Rows& k, const Rows& v, const Rows& g,
                      const Rows& beta, std::vector<double>& state);

}  // namespace met::testing
