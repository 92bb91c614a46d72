// Double-precision building blocks of the reference forward passes
// (reference_forward.cc, reference_recurrent.cc): matrix-vector products over
// float weights, RMS and L2 norms, RoPE and the scalar activations, each
// written from its definition.
// Threading: pure functions. Never linked into apps/.
#pragma once

#include <cstddef>
#include <vector>

namespace met::testing {

using Rows = std::vector<std::vector<double>>;

// y[n] = sum_k w[n][k] x[k] for the rows × x.size() matrix at w.
std::vector<double> matvec(const float* w, const std::vector<double>& x, size_t rows);
std::vector<double> matvec(const std::vector<float>& w, const std::vector<double>& x, size_t rows);
// x[i] / sqrt(mean(x[0..n)²) + eps) * w[i] for i < n.
std::vector<double> rms_norm(const std::vector<double>& x, const float* w, size_t n, double eps);
// x / max(‖x‖, eps) over [begin, begin + n) of x, in place (ggml's l2_norm).
void l2_normalize(std::vector<double>& x, size_t begin, size_t n, double eps);

double sigmoid(double x);
double silu(double x);
double softplus(double x);
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x³))): ggml's gelu.
double gelu_tanh(double x);

// Rotates each head's first rope_dims dims by pos * base^(-2i/rope_dims),
// divided by factors[i] where the model has frequency factors, and scales
// the rotated pairs by mscale (rope.scaling.attn_factor); NeoX pairs (i,
// i + rope_dims / 2) or adjacent ones.
void rope(std::vector<double>& x, size_t num_heads, size_t head_dim, size_t rope_dims, double base, bool neox,
          int pos, const float* factors, double mscale);

}  // namespace met::testing
