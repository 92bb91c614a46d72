// Tests for gated_delta.h: the scalar step on hand-checked cases and
// against a double-precision recurrence run token by token
// (gated_delta_testing.h); every tier's step and gemm against the
// references; every tier's recurrent and chunked forms against the
// double recurrence and each other, for lengths around the chunk size and
// several head sizes; and state carried across calls.
// Tolerances: relative to an element's magnitude plus its row's rms
// (expect_rows_near), so near-zero elements are held to their row's
// precision:
//   float forms vs double, 1e-5: a float dot of head_dim terms rounds at
//     ~sqrt(head_dim) * 6e-8 relative; the state's rounding is forgotten at
//     the decay rate, so it does not grow with the sequence.
//   step vs reference, 2e-6 (one token): sums in a different order.
//   gemm vs reference (double sums), 2e-6 of sum |a||b|.
//   chunked vs recurrent (both float), 2e-5: each within 1e-5 of double.
//   the recurrent form split into calls, and the chunked form split at
//   multiples of its chunk size: bit for bit (the same operations).
#include "backend/cpu/kernels/gated_delta.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "backend/cpu/kernels/gated_delta_kernels.h"
#include "backend/cpu/kernels/reference/gated_delta_ref.h"
#include "backend/gated_delta_testing.h"
#include "core/cpu_features.h"
#include "testing/random_data.h"

namespace met::cpu {
namespace {

using gated_delta_testing::DecayRange;
using gated_delta_testing::Exact;
using gated_delta_testing::expect_rows_near;
using gated_delta_testing::Input;
using gated_delta_testing::make_input;
using gated_delta_testing::output_buffer;
using gated_delta_testing::rows_of;
using gated_delta_testing::run_double;

constexpr int32_t kChunk = 64;  // the chunk size prefill uses
constexpr double kVsDouble = 1e-5;

std::string label(const std::string& what, int32_t head_dim, int64_t rows) {
  return what + " head_dim " + std::to_string(head_dim) + ", " + std::to_string(rows) + " rows";
}

// The float result of a form against the double recurrence: outputs and state.
void expect_matches_double(const Input& in, const std::vector<float>& out, const std::vector<float>& state,
                           double relative, const std::string& what) {
  const Exact exact = run_double(in);
  expect_rows_near(out.data(), in.stride, exact.out.data(), in.rows, in.head_dim, relative, what + " out");
  expect_rows_near(state.data(), in.head_dim, exact.state.data(), in.head_dim, in.head_dim, relative,
                   what + " state");
}

TEST(GatedDeltaReference, OneTokenOnAZeroStateStoresBetaVAlongK) {
  // S = k (beta v)^T, out_j = scale (q.k) beta v_j.
  const int32_t d = 4;
  const float q[d] = {0.5f, 0.5f, 0.5f, 0.5f}, k[d] = {1.0f, 0.0f, 0.0f, 0.0f}, v[d] = {1.0f, -2.0f, 3.0f, 4.0f};
  std::vector<float> state(d * d, 0.0f), out(d);
  ref::gated_delta_step(q, k, v, 0.5f, 0.25f, 0.5f, d, state.data(), out.data());
  for (int j = 0; j < d; ++j) {
    EXPECT_FLOAT_EQ(out[static_cast<size_t>(j)], 0.5f * 0.5f * 0.25f * v[j]) << j;
    for (int i = 0; i < d; ++i) {
      EXPECT_FLOAT_EQ(state[static_cast<size_t>(j * d + i)], i == 0 ? 0.25f * v[j] : 0.0f) << j << "," << i;
    }
  }
}

TEST(GatedDeltaReference, WithBetaZeroTheStateOnlyDecays) {
  const int32_t d = 8;
  Input in = make_input(d, 1, 3);
  std::vector<float> state = in.state, out(d);
  ref::gated_delta_step(in.q.data(), in.k.data(), in.v.data(), 0.25f, 0.0f, 1.0f, d, state.data(), out.data());
  for (size_t x = 0; x < state.size(); ++x) EXPECT_FLOAT_EQ(state[x], 0.25f * in.state[x]) << x;
  for (int j = 0; j < d; ++j) {
    double o = 0.0;
    for (int i = 0; i < d; ++i) o += 0.25 * in.state[static_cast<size_t>(j * d + i)] * in.q[static_cast<size_t>(i)];
    EXPECT_NEAR(out[static_cast<size_t>(j)], o, 1e-6) << j;
  }
}

TEST(GatedDeltaReference, ScalarRecurrenceMatchesDoublePrecision) {
  for (const int32_t d : {16, 64, 128}) {
    const Input in = make_input(d, 3 * kChunk + 5, static_cast<uint32_t>(d));
    std::vector<float> out = output_buffer(in), state = in.state;
    gated_delta_recurrent_with(gated_delta_kernels_for_isa(Isa::kScalar), rows_of(in, out), in.rows, d,
                               state.data());
    expect_matches_double(in, out, state, kVsDouble, label("scalar recurrent", d, in.rows));
  }
}

TEST(GatedDeltaReference, GemmLowerReadsNothingAboveTheDiagonal) {
  const int64_t m = 5, k = 5, n = 3;
  std::vector<float> a(m * k, std::numeric_limits<float>::quiet_NaN()), b(k * n, 1.0f), c(m * n);
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t x = 0; x <= r; ++x) a[static_cast<size_t>(r * k + x)] = static_cast<float>(x + 1);
  }
  ref::gated_delta_gemm(m, n, k, a.data(), k, b.data(), n, c.data(), n, false, true);
  for (int64_t r = 0; r < m; ++r) EXPECT_EQ(c[static_cast<size_t>(r * n)], (r + 1) * (r + 2) / 2.0f) << r;
}

TEST(GatedDelta, PublicEntryPointsRunTheSelectedKernels) {
  const Input in = make_input(64, 70, 5);
  std::vector<float> out = output_buffer(in), expected = output_buffer(in);
  std::vector<float> state = in.state, expected_state = in.state;
  gated_delta_recurrent(rows_of(in, out), in.rows, 64, state.data());
  gated_delta_recurrent_with(selected_gated_delta_kernels(), rows_of(in, expected), in.rows, 64,
                             expected_state.data());
  EXPECT_EQ(out, expected);
  EXPECT_EQ(state, expected_state);
  GatedDeltaScratch scratch(kChunk, 64);
  out = output_buffer(in);
  state = in.state;
  expected = output_buffer(in);
  expected_state = in.state;
  gated_delta_chunked(rows_of(in, out), in.rows, 64, state.data(), scratch);
  gated_delta_chunked_with(selected_gated_delta_kernels(), rows_of(in, expected), in.rows, 64,
                           expected_state.data(), scratch);
  EXPECT_EQ(out, expected);
  EXPECT_EQ(state, expected_state);
}

// Every tier, the references (kScalar) included, through both forms.
class GatedDeltaTiers : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!isa_supported(detect_cpu_features(), GetParam())) {
      GTEST_SKIP() << "this CPU lacks " << isa_name(GetParam()) << "; its kernels are not checked here";
    }
    kernels_ = gated_delta_kernels_for_isa(GetParam());
    if (kernels_.step == nullptr) GTEST_SKIP() << isa_name(GetParam()) << " has no kernels of its own";
  }

  std::vector<float> recurrent(const Input& in, std::vector<float>& state) const {
    std::vector<float> out = output_buffer(in);
    gated_delta_recurrent_with(kernels_, rows_of(in, out), in.rows, in.head_dim, state.data());
    return out;
  }
  std::vector<float> chunked(const Input& in, std::vector<float>& state, int32_t chunk = kChunk) const {
    std::vector<float> out = output_buffer(in);
    GatedDeltaScratch scratch(chunk, in.head_dim);
    gated_delta_chunked_with(kernels_, rows_of(in, out), in.rows, in.head_dim, state.data(), scratch);
    return out;
  }

  GatedDeltaKernels kernels_;
};

TEST_P(GatedDeltaTiers, StepMatchesTheReference) {
  for (const int32_t d : {8, 16, 24, 64, 100, 128}) {
    const Input in = make_input(d, 1, static_cast<uint32_t>(100 + d));
    std::vector<float> state = in.state, expected_state = in.state, out(d), expected(d);
    const float decay = std::exp(in.gb[0]), beta = in.gb[1], scale = 1.0f / std::sqrt(static_cast<float>(d));
    ref::gated_delta_step(in.q.data(), in.k.data(), in.v.data(), decay, beta, scale, d, expected_state.data(),
                          expected.data());
    kernels_.step(in.q.data(), in.k.data(), in.v.data(), decay, beta, scale, d, state.data(), out.data());
    expect_rows_near(out.data(), d, expected.data(), d, 1, d, 2e-6, label("step out", d, 1));
    expect_rows_near(state.data(), d, expected_state.data(), d, d, d, 2e-6, label("step state", d, 1));
  }
}

struct GemmCase {
  int64_t m, n, k, lda, ldb, ldc;
  bool lower, accumulate;
  std::string name() const {
    return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + (lower ? " lower" : "") +
           (accumulate ? " accumulate" : "");
  }
};

// c against the reference's `expected` from c0: within 2e-6 of sum |a b|
// (plus |c0| when accumulating) in columns < n, untouched past them.
void expect_gemm_near(const GemmCase& g, const std::vector<float>& a, const std::vector<float>& b,
                      const std::vector<float>& c0, const std::vector<float>& c, const std::vector<float>& expected) {
  int failures = 0;
  for (int64_t r = 0; r < g.m; ++r) {
    const int64_t kend = g.lower ? std::min(g.k, r + 1) : g.k;
    for (int64_t col = 0; col < g.ldc; ++col) {
      const size_t at = static_cast<size_t>(r * g.ldc + col);
      double magnitude = g.accumulate ? std::fabs(c0[at]) : 0.0;
      for (int64_t x = 0; x < kend && col < g.n; ++x) {
        magnitude += std::fabs(a[static_cast<size_t>(r * g.lda + x)] * b[static_cast<size_t>(x * g.ldb + col)]);
      }
      const bool ok = col < g.n ? std::fabs(c[at] - expected[at]) <= 2e-6 * magnitude + 1e-30 : c[at] == c0[at];
      if (!ok && ++failures <= 5) {
        ADD_FAILURE() << g.name() << ": c[" << r << "][" << col << "] = " << c[at] << ", reference " << expected[at];
      }
    }
  }
}

TEST_P(GatedDeltaTiers, GemmMatchesTheReference) {
  const int64_t shapes[][3] = {{1, 1, 1}, {5, 3, 7}, {64, 64, 128}, {64, 128, 64}, {13, 100, 29}, {128, 128, 61}};
  std::mt19937 rng(7);
  met::testing::NormalFloat normal(0.0f, 1.0f);
  for (const auto& [m, n, k] : shapes) {
    for (const bool lower : {false, true}) {
      for (const bool accumulate : {false, true}) {
        const GemmCase g{m, n, k, k + 2, n + 1, n + 3, lower, accumulate};
        std::vector<float> a(static_cast<size_t>(m * g.lda)), b(static_cast<size_t>(k * g.ldb));
        std::vector<float> c0(static_cast<size_t>(m * g.ldc));
        for (std::vector<float>* x : {&a, &b, &c0}) {
          for (float& f : *x) f = normal(rng);
        }
        for (int64_t r = 0; r < m && lower; ++r) {
          for (int64_t x = r + 1; x < k; ++x) a[static_cast<size_t>(r * g.lda + x)] = std::nanf("");
        }
        std::vector<float> c = c0, expected = c0;
        ref::gated_delta_gemm(m, n, k, a.data(), g.lda, b.data(), g.ldb, expected.data(), g.ldc, accumulate, lower);
        kernels_.gemm(m, n, k, a.data(), g.lda, b.data(), g.ldb, c.data(), g.ldc, accumulate, lower);
        expect_gemm_near(g, a, b, c0, c, expected);
      }
    }
  }
}

TEST_P(GatedDeltaTiers, RecurrentMatchesDoublePrecision) {
  for (const int32_t d : {16, 24, 64, 128}) {
    const Input in = make_input(d, 3 * kChunk + 5, static_cast<uint32_t>(200 + d));
    std::vector<float> state = in.state;
    const std::vector<float> out = recurrent(in, state);
    expect_matches_double(in, out, state, kVsDouble, label("recurrent", d, in.rows));
  }
}

TEST_P(GatedDeltaTiers, ChunkedMatchesRecurrentAndDoublePrecision) {
  for (const int32_t d : {16, 24, 64, 128}) {
    for (const int64_t rows : {int64_t{1}, int64_t{kChunk - 1}, int64_t{kChunk}, int64_t{kChunk + 1},
                               int64_t{3 * kChunk + 5}}) {
      const Input in = make_input(d, rows, static_cast<uint32_t>(300 + d + rows));
      std::vector<float> state = in.state, recurrent_state = in.state;
      const std::vector<float> out = chunked(in, state);
      expect_matches_double(in, out, state, kVsDouble, label("chunked", d, rows));
      const std::vector<float> expected = recurrent(in, recurrent_state);
      expect_rows_near(out.data(), in.stride, expected.data(), in.stride, rows, d, 2 * kVsDouble,
                       label("chunked vs recurrent out", d, rows));
      expect_rows_near(state.data(), d, recurrent_state.data(), d, d, d, 2 * kVsDouble,
                       label("chunked vs recurrent state", d, rows));
    }
  }
}

TEST_P(GatedDeltaTiers, ChunkedHandlesStrongAndNoDecay) {
  // g near -30 per row takes the chunk's total decay below e^-80, where the
  // decays come one exp per pair; g = 0 keeps everything.
  const DecayRange ranges[] = {{-40.0f, -20.0f}, {0.0f, 0.0f}, {-3.0f, -1e-4f}};
  for (const DecayRange& range : ranges) {
    const Input in = make_input(64, 2 * kChunk + 9, 11, range);
    std::vector<float> state = in.state;
    const std::vector<float> out = chunked(in, state);
    expect_matches_double(in, out, state, kVsDouble, "chunked, g in [" + std::to_string(range.lo) + ", " +
                                                         std::to_string(range.hi) + "]");
  }
}

TEST_P(GatedDeltaTiers, ChunkedWorksForAnyChunkSize) {
  const Input in = make_input(32, 50, 13);
  for (const int32_t chunk : {1, 2, 7, 16, 50, 128}) {
    std::vector<float> state = in.state;
    const std::vector<float> out = chunked(in, state, chunk);
    expect_matches_double(in, out, state, kVsDouble, "chunk " + std::to_string(chunk));
  }
}

TEST_P(GatedDeltaTiers, RecurrentSplitIntoCallsIsBitExact) {
  const Input in = make_input(64, 100, 17);
  std::vector<float> whole_state = in.state;
  const std::vector<float> whole = recurrent(in, whole_state);
  for (const int64_t first : {int64_t{1}, int64_t{37}, int64_t{99}}) {
    std::vector<float> out = output_buffer(in), state = in.state;
    gated_delta_recurrent_with(kernels_, rows_of(in, out), first, 64, state.data());
    gated_delta_recurrent_with(kernels_, rows_of(in, out, first), in.rows - first, 64, state.data());
    EXPECT_EQ(out, whole) << first;
    EXPECT_EQ(state, whole_state) << first;
  }
}

TEST_P(GatedDeltaTiers, ChunkedCarriesStateAcrossCalls) {
  for (const int32_t d : {16, 128}) {
    const Input in = make_input(d, 2 * kChunk + 22, static_cast<uint32_t>(400 + d));
    std::vector<float> whole_state = in.state;
    const std::vector<float> whole = chunked(in, whole_state);
    GatedDeltaScratch scratch(kChunk, d);
    for (const int64_t first : {int64_t{1}, int64_t{kChunk}, int64_t{kChunk + 30}}) {
      std::vector<float> out = output_buffer(in), state = in.state;
      gated_delta_chunked_with(kernels_, rows_of(in, out), first, d, state.data(), scratch);
      gated_delta_chunked_with(kernels_, rows_of(in, out, first), in.rows - first, d, state.data(), scratch);
      const std::string what = label("split at " + std::to_string(first), d, in.rows);
      expect_rows_near(out.data(), in.stride, whole.data(), in.stride, in.rows, d, 2 * kVsDouble, what + " out");
      expect_rows_near(state.data(), d, whole_state.data(), d, d, d, 2 * kVsDouble, what + " state");
    }
  }
}

TEST_P(GatedDeltaTiers, ChunkedSplitAtChunkBoundariesIsBitExact) {
  // Calls cut at multiples of the chunk size run the same chunks, and the
  // state crosses calls by exact transposes: the one call's bits.
  const Input in = make_input(64, 3 * kChunk + 7, 23);
  std::vector<float> whole_state = in.state;
  const std::vector<float> whole = chunked(in, whole_state);
  GatedDeltaScratch scratch(kChunk, 64);
  std::vector<float> out = output_buffer(in), state = in.state;
  int64_t row = 0;
  for (const int64_t n : {int64_t{kChunk}, int64_t{2 * kChunk}, in.rows - 3 * kChunk}) {
    gated_delta_chunked_with(kernels_, rows_of(in, out, row), n, 64, state.data(), scratch);
    row += n;
  }
  EXPECT_EQ(out, whole);
  EXPECT_EQ(state, whole_state);
}

TEST_P(GatedDeltaTiers, AMovedScratchStillWorks) {
  const Input in = make_input(32, 40, 29);
  std::vector<float> expected_state = in.state, state = in.state;
  const std::vector<float> expected = chunked(in, expected_state, 16);
  std::vector<GatedDeltaScratch> scratches;
  scratches.emplace_back(16, 32);
  scratches.emplace_back(16, 32);  // may reallocate: the first one moves
  GatedDeltaScratch moved = std::move(scratches.front());
  std::vector<float> out = output_buffer(in);
  gated_delta_chunked_with(kernels_, rows_of(in, out), in.rows, 32, state.data(), moved);
  EXPECT_EQ(out, expected);
  EXPECT_EQ(state, expected_state);
}

TEST_P(GatedDeltaTiers, NoRowsChangeNothing) {
  const Input in = make_input(16, 1, 19);
  std::vector<float> state = in.state, out = output_buffer(in);
  GatedDeltaScratch scratch(kChunk, 16);
  gated_delta_recurrent_with(kernels_, rows_of(in, out), 0, 16, state.data());
  gated_delta_chunked_with(kernels_, rows_of(in, out), 0, 16, state.data(), scratch);
  EXPECT_EQ(state, in.state);
  EXPECT_EQ(out, output_buffer(in));
}

INSTANTIATE_TEST_SUITE_P(Tiers, GatedDeltaTiers,
                         ::testing::Values(Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kAmx),
                         [](const ::testing::TestParamInfo<Isa>& tier) {
                           return std::string(isa_name(tier.param));
                         });

}  // namespace
}  // namespace met::cpu
