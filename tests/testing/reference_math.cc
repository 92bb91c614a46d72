// Reference math helpers.
#include "testing/reference_math.h"

#include <algorithm>
#include <cmath>

namespace met::testing {

std::vector<double> matvec(const float* w, const std::vector<double>& x, size_t rows) {
  const size_t cols = x.size();
  std::vector<double> y(rows, 0.0);
  for (size_t n = 0; n < rows; ++n) {
    double acc = 0.0;
    for (size_t k = 0; k < cols; ++k) acc += static_cast<double>(w[n * cols + k]) * x[k];
    y[n] = acc;
  }
  return y;
}

std::vector<double> matvec(const std::vector<float>& w, const std::vector<double>& x, size_t rows) {
  return matvec(w.data(), x, rows);
}

std::vector<double> rms_norm(const std::vector<double>& x, const float* w, size_t n, double eps) {
  double ss = 0.0;
  for (size_t i = 0; i < n; ++i) ss += x[i] * x[i];
  const double scale = 1.0 / std::sqrt(ss / static_cast<double>(n) + eps);
  std::vector<double> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = x[i] * scale * w[i];
  return out;
}

void l2_normalize(std::vector<double>& x, size_t begin, size_t n, double eps) {
  double ss = 0.0;
  for (size_t i = begin; i < begin + n; ++i) ss += x[i] * x[i];
  const double scale = 1.0 / std::max(std::sqrt(ss), eps);
  for (size_t i = begin; i < begin + n; ++i) x[i] *= scale;
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

double silu(double x) { return x * sigmoid(x); }

double gelu_tanh(double x) {
  const double c = std::sqrt(2.0 / 3.14159265358979323846);
  return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
}

// Rotates each head's first rope_dims dims by pos * base^(-2i/rope_dims),
// divided by factors[i] where the model has frequency factors, and scales
// the rotated pairs by mscale (rope.scaling.attn_factor).
void rope(std::vector<double>& x, size_t num_heads, size_t head_dim, size_t rope_dims, double base,
          bool neox, int pos, const float* factors, double mscale) {
  for (size_t h = 0; h < num_heads; ++h) {
    double* v = &x[h * head_dim];
    for (size_t i = 0; i < rope_dims / 2; ++i) {
      double theta = pos * std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(rope_dims));
      if (factors != nullptr) theta /= factors[i];
      const size_t a = neox ? i : 2 * i;
      const size_t b = neox ? i + rope_dims / 2 : 2 * i + 1;
      const double x0 = v[a], x1 = v[b];
      v[a] = (x0 * std::cos(theta) - x1 * std::sin(theta)) * mscale;
      v[b] = (x0 * std::sin(theta) + x1 * std::cos(theta)) * mscale;
    }
  }
}


// log(1 + e^x), without overflow for large x.
double softplus(double x) { return x > 30.0 ? x : std::log1p(std::exp(x)); }

}  // namespace met::testing
