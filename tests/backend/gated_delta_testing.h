// Helpers for tests/backend/gated_delta_test.cc: random rows of one value
// head laid out with strides (q, k L2-normalised in double; g <= 0; beta in
// (0, 1)), and the gated delta rule run token by token in double precision
// straight from its definition (gated_delta.h), the truth every float form
// is measured against. Test-only.
// Threading: plain values, the test thread.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backend/cpu/kernels/gated_delta.h"
#include "testing/random_data.h"

namespace met::cpu::gated_delta_testing {

// Row r of q, k, v at r * stride (stride > head_dim: the gaps hold garbage
// a kernel must not read into its results); g and beta interleaved.
struct Input {
  int32_t head_dim = 0;
  int64_t rows = 0;
  int64_t stride = 0;
  std::vector<float> q, k, v, gb;  // gb[2r] = g, gb[2r + 1] = beta
  std::vector<float> state;        // head_dim^2, transposed (state[j*d + i] = S[i][j])
};

struct DecayRange {
  float lo = -1.0f;  // g drawn uniformly from [lo, hi]
  float hi = -0.01f;
};

inline void l2_normalise(float* x, int64_t n) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * x[i];
  const double inv = 1.0 / std::sqrt(sum);
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(x[i] * inv);
}

inline Input make_input(int32_t head_dim, int64_t rows, uint32_t seed, DecayRange decay = {}) {
  Input in;
  in.head_dim = head_dim;
  in.rows = rows;
  in.stride = head_dim + 3;
  std::mt19937 rng(seed);
  met::testing::NormalFloat normal(0.0f, 1.0f);
  met::testing::UniformFloat g_dist(decay.lo, decay.hi), beta_dist(0.05f, 0.95f);
  const auto size = static_cast<size_t>(rows * in.stride);
  for (std::vector<float>* x : {&in.q, &in.k, &in.v}) {
    x->resize(size);
    for (float& f : *x) f = normal(rng);
  }
  for (int64_t r = 0; r < rows; ++r) {
    l2_normalise(in.q.data() + r * in.stride, head_dim);
    l2_normalise(in.k.data() + r * in.stride, head_dim);
  }
  in.gb.resize(static_cast<size_t>(2 * rows));
  for (int64_t r = 0; r < rows; ++r) {
    in.gb[static_cast<size_t>(2 * r)] = g_dist(rng);
    in.gb[static_cast<size_t>(2 * r + 1)] = beta_dist(rng);
  }
  in.state.resize(static_cast<size_t>(head_dim) * head_dim);
  for (float& f : in.state) f = 0.5f * normal(rng);
  return in;
}

// Rows [row0, row0 + n) of `in` writing into out (rows of in.stride floats).
inline GatedDeltaRows rows_of(const Input& in, std::vector<float>& out, int64_t row0 = 0) {
  GatedDeltaRows rows;
  const int64_t at = row0 * in.stride;
  rows.q = in.q.data() + at;
  rows.k = in.k.data() + at;
  rows.v = in.v.data() + at;
  rows.q_stride = rows.k_stride = rows.v_stride = in.stride;
  rows.g = in.gb.data() + 2 * row0;
  rows.beta = in.gb.data() + 2 * row0 + 1;
  rows.gb_stride = 2;
  rows.out = out.data() + at;
  rows.out_stride = in.stride;
  return rows;
}

inline std::vector<float> output_buffer(const Input& in) {
  return std::vector<float>(static_cast<size_t>(in.rows * in.stride), 12345.0f);
}

struct Exact {
  std::vector<double> out;    // rows x head_dim
  std::vector<double> state;  // transposed, as Input::state
};

// The recurrence of gated_delta.h in double, token by token from in.state.
inline Exact run_double(const Input& in) {
  const int64_t d = in.head_dim;
  Exact e;
  e.state.assign(in.state.begin(), in.state.end());
  e.out.assign(static_cast<size_t>(in.rows * d), 0.0);
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  for (int64_t r = 0; r < in.rows; ++r) {
    const float* q = in.q.data() + r * in.stride;
    const float* k = in.k.data() + r * in.stride;
    const float* v = in.v.data() + r * in.stride;
    const double decay = std::exp(static_cast<double>(in.gb[static_cast<size_t>(2 * r)]));
    const double beta = in.gb[static_cast<size_t>(2 * r + 1)];
    for (double& s : e.state) s *= decay;
    for (int64_t j = 0; j < d; ++j) {
      double* row = e.state.data() + j * d;
      double kv = 0.0;
      for (int64_t i = 0; i < d; ++i) kv += row[i] * k[i];
      const double delta = beta * (v[j] - kv);
      double o = 0.0;
      for (int64_t i = 0; i < d; ++i) {
        row[i] += k[i] * delta;
        o += row[i] * q[i];
      }
      e.out[static_cast<size_t>(r * d + j)] = scale * o;
    }
  }
  return e;
}

inline double rms(const double* x, int64_t n) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += x[i] * x[i];
  return std::sqrt(sum / static_cast<double>(n));
}

// |actual - expected| <= relative * (|expected| + rms(expected's row)) for
// every element of `num_rows` rows of `n` (actual's rows at actual_stride):
// relative error against the row's scale, so an element near zero is held
// to its row's precision rather than to its own tiny magnitude.
inline void expect_rows_near(const float* actual, int64_t actual_stride, const double* expected, int64_t num_rows,
                             int64_t n, double relative, const std::string& what) {
  int failures = 0;
  for (int64_t r = 0; r < num_rows; ++r) {
    const double row_scale = rms(expected + r * n, n);
    for (int64_t i = 0; i < n; ++i) {
      const double e = expected[r * n + i];
      const double a = actual[r * actual_stride + i];
      if (!(std::fabs(a - e) <= relative * (std::fabs(e) + row_scale)) && ++failures <= 5) {
        ADD_FAILURE() << what << ": row " << r << " [" << i << "] = " << a << ", expected " << e << " (row rms "
                      << row_scale << ")";
      }
    }
  }
}

// Float rows compared to float rows (as double), same rule.
inline void expect_rows_near(const float* actual, int64_t actual_stride, const float* expected,
                             int64_t expected_stride, int64_t num_rows, int64_t n, double relative,
                             const std::string& what) {
  std::vector<double> dense(static_cast<size_t>(num_rows * n));
  for (int64_t r = 0; r < num_rows; ++r) {
    for (int64_t i = 0; i < n; ++i) dense[static_cast<size_t>(r * n + i)] = expected[r * expected_stride + i];
  }
  expect_rows_near(actual, actual_stride, dense.data(), num_rows, n, relative, what);
}

}  // namespace met::cpu::gated_delta_testing
