// Double-precision building blocks of the reference forward passes
// (reference_forward.cc, reference_recurrent.cc): matrix-vector products over
// float weights, RMS and L2 norms, and the scalar activations, each written
// from its definition.
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

}  // namespace met::testing
