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

// log(1 + e^x), without overflow for large x.
double softplus(double x) { return x > 30.0 ? x : std::log1p(std::exp(x)); }

}  // namespace met::testing
