// Helpers for tests/backend/ssm_scan_test.cc: random rows of one Mamba2 head
// laid out with strides whose gaps hold NaN (a kernel that reads one into a
// result fails loudly); the selective scan run token by token in double
// precision straight from its definition (ssm_scan.h), the truth every
// float form is measured against; and the comparison, which holds each
// value to a fraction of its magnitude: the same scan over absolute values,
//   |S|[p][n] <- e^(dt A) |S|[p][n] + dt |x[p] B[n]|,
//   |y|[p] = sum_n |S|[p][n] |C[n]| + |D x[p]|,
// the size of the terms a result is summed from, whatever cancels between
// them (D x against the scan, a row's inputs against the decayed state), so
// a float form's rounding is a fixed fraction of it. Test-only.
// Threading: plain values, the test thread.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backend/cpu/kernels/ssm_scan.h"
#include "testing/random_data.h"

namespace met::cpu::ssm_scan_testing {

// How a head's rows are drawn: dt_raw uniform in [dt_lo, dt_hi], so dt =
// softplus(dt_raw + dt_bias); the defaults give dt in (0.004, 0.97) and a
// per-row log decay dt A down to about -1 (a chunk of 64 rows decays by
// around e^-20, where the chunked form splits e^(L_t - L_s)).
struct ScanParams {
  float a = -1.0f;
  float dt_lo = -6.0f;
  float dt_hi = 0.0f;
  float dt_bias = 0.5f;
  float d = 0.7f;
};

// Row r of x at r * x_stride (head_dim floats), of b and c at r * bc_stride
// (d_state floats), dt_raw at dt[2r]; every gap is NaN.
struct ScanInput {
  int32_t head_dim = 0;
  int32_t d_state = 0;
  int64_t rows = 0;
  int64_t x_stride = 0;
  int64_t bc_stride = 0;
  std::vector<float> x, b, c, dt;
  ScanParams params;
  std::vector<float> state;  // head_dim x d_state, d_state fastest
};

inline constexpr float kScanSentinel = 12345.0f;  // y's gaps must keep it

inline void fill_strided(std::vector<float>& v, int64_t rows, int64_t width, int64_t stride,
                         met::testing::NormalFloat& normal, std::mt19937& rng) {
  v.assign(static_cast<size_t>(rows * stride), std::numeric_limits<float>::quiet_NaN());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < width; ++i) v[static_cast<size_t>(r * stride + i)] = normal(rng);
  }
}

inline ScanInput make_scan_input(int32_t head_dim, int32_t d_state, int64_t rows, uint32_t seed,
                                 ScanParams params = {}) {
  ScanInput in;
  in.head_dim = head_dim;
  in.d_state = d_state;
  in.rows = rows;
  in.x_stride = head_dim + 3;
  in.bc_stride = d_state + 5;
  in.params = params;
  std::mt19937 rng(seed);
  met::testing::NormalFloat normal(0.0f, 1.0f);
  met::testing::UniformFloat dt_dist(params.dt_lo, params.dt_hi);
  fill_strided(in.x, rows, head_dim, in.x_stride, normal, rng);
  fill_strided(in.b, rows, d_state, in.bc_stride, normal, rng);
  fill_strided(in.c, rows, d_state, in.bc_stride, normal, rng);
  in.dt.assign(static_cast<size_t>(2 * rows), std::numeric_limits<float>::quiet_NaN());
  for (int64_t r = 0; r < rows; ++r) in.dt[static_cast<size_t>(2 * r)] = dt_dist(rng);
  in.state.resize(static_cast<size_t>(head_dim) * d_state);
  for (float& f : in.state) f = 0.5f * normal(rng);
  return in;
}

// Rows [row0, ...) of `in` writing into y (rows of in.x_stride floats).
inline SsmScanRows scan_rows_of(const ScanInput& in, std::vector<float>& y, int64_t row0 = 0) {
  SsmScanRows rows;
  rows.x = in.x.data() + row0 * in.x_stride;
  rows.x_stride = in.x_stride;
  rows.b = in.b.data() + row0 * in.bc_stride;
  rows.c = in.c.data() + row0 * in.bc_stride;
  rows.b_stride = rows.c_stride = in.bc_stride;
  rows.dt = in.dt.data() + 2 * row0;
  rows.dt_stride = 2;
  rows.dt_bias = in.params.dt_bias;
  rows.a = in.params.a;
  rows.d = in.params.d;
  rows.y = y.data() + row0 * in.x_stride;
  rows.y_stride = in.x_stride;
  return rows;
}

inline std::vector<float> scan_output_buffer(const ScanInput& in) {
  return std::vector<float>(static_cast<size_t>(in.rows * in.x_stride), kScanSentinel);
}

struct ScanExact {
  std::vector<double> y;      // rows x head_dim
  std::vector<double> state;  // as ScanInput::state
  std::vector<double> y_magnitude;      // |y| above, as y
  std::vector<double> state_magnitude;  // |S| above, as state
};

// The scan of ssm_scan.h in double, token by token from in.state, with the
// magnitudes of its results.
inline ScanExact run_scan_double(const ScanInput& in) {
  const int64_t hd = in.head_dim, ds = in.d_state;
  ScanExact e;
  e.state.assign(in.state.begin(), in.state.end());
  e.state_magnitude.resize(e.state.size());
  for (size_t i = 0; i < e.state.size(); ++i) e.state_magnitude[i] = std::fabs(e.state[i]);
  e.y.assign(static_cast<size_t>(in.rows * hd), 0.0);
  e.y_magnitude.assign(e.y.size(), 0.0);
  for (int64_t r = 0; r < in.rows; ++r) {
    const float* x = in.x.data() + r * in.x_stride;
    const float* b = in.b.data() + r * in.bc_stride;
    const float* c = in.c.data() + r * in.bc_stride;
    const double v = static_cast<double>(in.dt[static_cast<size_t>(2 * r)]) + in.params.dt_bias;
    const double dt = v > 20.0 ? v : std::log1p(std::exp(v));
    const double decay = std::exp(dt * in.params.a);
    for (int64_t p = 0; p < hd; ++p) {
      double* row = e.state.data() + p * ds;
      double* row_magnitude = e.state_magnitude.data() + p * ds;
      double y = 0.0, y_magnitude = 0.0;
      for (int64_t n = 0; n < ds; ++n) {
        row[n] = decay * row[n] + dt * x[p] * b[n];
        row_magnitude[n] = decay * row_magnitude[n] + std::fabs(dt * x[p] * b[n]);
        y += row[n] * c[n];
        y_magnitude += row_magnitude[n] * std::fabs(c[n]);
      }
      const double skip = static_cast<double>(in.params.d) * x[p];
      e.y[static_cast<size_t>(r * hd + p)] = y + skip;
      e.y_magnitude[static_cast<size_t>(r * hd + p)] = y_magnitude + std::fabs(skip);
    }
  }
  return e;
}

// |actual - expected| <= relative * magnitude for each element of
// `num_rows` rows of `n` (actual's and expected's rows at their strides;
// magnitude dense, num_rows x n).
template <typename Expected>
void expect_scan_near(const float* actual, int64_t actual_stride, const Expected* expected, int64_t expected_stride,
                      const double* magnitude, int64_t num_rows, int64_t n, double relative,
                      const std::string& what) {
  int failures = 0;
  for (int64_t r = 0; r < num_rows; ++r) {
    for (int64_t i = 0; i < n; ++i) {
      const double a = actual[r * actual_stride + i], e = expected[r * expected_stride + i];
      const double m = magnitude[r * n + i];
      if (!(std::fabs(a - e) <= relative * m) && ++failures <= 5) {
        ADD_FAILURE() << what << ": row " << r << " [" << i << "] = " << a << ", expected " << e << " (magnitude "
                      << m << ", error " << std::fabs(a - e) / m << " of it)";
      }
    }
  }
}

// y's gaps between rows (columns head_dim .. x_stride) still hold the sentinel.
inline void expect_gaps_untouched(const ScanInput& in, const std::vector<float>& y, const std::string& what) {
  int failures = 0;
  for (int64_t r = 0; r < in.rows; ++r) {
    for (int64_t i = in.head_dim; i < in.x_stride; ++i) {
      const float got = y[static_cast<size_t>(r * in.x_stride + i)];
      if (got != kScanSentinel && ++failures <= 3) {
        ADD_FAILURE() << what << ": y row " << r << " gap [" << i << "] written: " << got;
      }
    }
  }
}

}  // namespace met::cpu::ssm_scan_testing
