// Tests for ssm_scan.h: the head-to-group rule; the scalar block on
// hand-checked cases and against a double-precision scan run token by token
// (ssm_scan_testing.h); every tier's block against the reference; every
// tier's recurrent and chunked forms against the double scan and each other,
// for lengths around the chunk size and head_dim / d_state from 16 to 128
// (and ragged ones that leave vector tails); strong, no and linear-softplus
// decay; and state carried across calls.
// Tolerances: a fraction of each value's magnitude, the size of the terms
// it is summed from (ssm_scan_testing.h: the scan over absolute values), so
// a value that cancels (D x against the scan, a row against the decayed
// state) is held to what float can give it, not to its own small size. A
// float rounding is 2^-24 = 6e-8 of the magnitude at most:
//   float forms vs double, 2e-6 (32 roundings): a y sums d_state rounded
//     products, a state element carries one rounding per row until the
//     decay forgets it (with no decay, all of them), and these add up like
//     a random walk, about sqrt(d_state + rows) = 18 roundings here; the
//     worst seen is 5e-7.
//   block vs reference, 2e-6: one rounding fewer per update and the dot
//     summed in another order (the worst seen is 4e-7).
//   chunked vs recurrent, and the chunked form split off its chunk
//     boundaries, 4e-6: each within 2e-6 of double.
//   the recurrent form split into calls, and the chunked form split at
//   multiples of its chunk size: bit for bit (the same operations).
#include "backend/cpu/kernels/ssm_scan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "backend/cpu/kernels/reference/ssm_scan_ref.h"
#include "backend/cpu/kernels/ssm_scan_kernels.h"
#include "backend/ssm_scan_testing.h"
#include "core/cpu_features.h"

namespace met::cpu {
namespace {

using ssm_scan_testing::expect_gaps_untouched;
using ssm_scan_testing::expect_scan_near;
using ssm_scan_testing::make_scan_input;
using ssm_scan_testing::run_scan_double;
using ssm_scan_testing::scan_output_buffer;
using ssm_scan_testing::scan_rows_of;
using ssm_scan_testing::ScanExact;
using ssm_scan_testing::ScanInput;
using ssm_scan_testing::ScanParams;

constexpr int32_t kScanChunk = 64;  // the chunk size prefill uses
constexpr double kScanVsDouble = 2e-6;
constexpr double kScanBlockVsReference = 2e-6;

struct HeadShape {
  int32_t head_dim;
  int32_t d_state;
};
// 16..128 each way, Mamba2's (64, 128), and ragged sizes that leave vector
// tails in every tier (AVX2 holds 64 floats of a state row, AVX-512 128:
// 204 is pieces of 64 + 64 + 64 + 12 and 128 + 76).
constexpr HeadShape kScanShapes[] = {{16, 16}, {16, 128}, {64, 128}, {128, 64}, {128, 128}, {24, 36}, {8, 204}};

std::string scan_label(const std::string& what, const ScanInput& in) {
  return what + " head_dim " + std::to_string(in.head_dim) + ", d_state " + std::to_string(in.d_state) + ", " +
         std::to_string(in.rows) + " rows";
}

// A form's float result against the double scan: outputs, state, y's gaps.
void expect_scan_matches_double(const ScanInput& in, const std::vector<float>& y, const std::vector<float>& state,
                                double relative, const std::string& what) {
  const ScanExact exact = run_scan_double(in);
  expect_scan_near(y.data(), in.x_stride, exact.y.data(), in.head_dim, exact.y_magnitude.data(), in.rows,
                   in.head_dim, relative, what + " y");
  expect_scan_near(state.data(), in.d_state, exact.state.data(), in.d_state, exact.state_magnitude.data(),
                   in.head_dim, in.d_state, relative, what + " state");
  expect_gaps_untouched(in, y, what);
}

// Two float results of the scan of `in` (its first `rows` rows) against
// each other, held to the double scan's magnitudes.
void expect_scans_close(const ScanInput& in, int64_t rows, const std::vector<float>& y,
                        const std::vector<float>& expected_y, const std::vector<float>& state,
                        const std::vector<float>& expected_state, double relative, const std::string& what) {
  const ScanExact exact = run_scan_double(in);
  expect_scan_near(y.data(), in.x_stride, expected_y.data(), in.x_stride, exact.y_magnitude.data(), rows,
                   in.head_dim, relative, what + " y");
  expect_scan_near(state.data(), in.d_state, expected_state.data(), in.d_state, exact.state_magnitude.data(),
                   in.head_dim, in.d_state, relative, what + " state");
}

TEST(SsmScan, HeadsShareAGroupInConsecutiveRuns) {
  // ggml's repeat_interleave: heads 0..3 read group 0, 4..7 group 1.
  static_assert(ssm_group_of_head(3, 8, 2) == 0 && ssm_group_of_head(4, 8, 2) == 1);
  const int32_t expected[] = {0, 0, 0, 0, 1, 1, 1, 1};
  for (int32_t h = 0; h < 8; ++h) {
    EXPECT_EQ(ssm_group_of_head(h, 8, 2), expected[h]) << h;
    EXPECT_EQ(ssm_group_of_head(h, 8, 1), 0) << h;
    EXPECT_EQ(ssm_group_of_head(h, 8, 8), h) << h;
  }
}

TEST(SsmScan, SoftplusIsLinearAbove20AndAccurateFarBelowZero) {
  EXPECT_EQ(ssm_softplus(25.0f), 25.0f);
  EXPECT_FLOAT_EQ(ssm_softplus(0.0f), static_cast<float>(std::log(2.0)));
  EXPECT_FLOAT_EQ(ssm_softplus(20.0f), static_cast<float>(std::log1p(std::exp(20.0))));
  EXPECT_FLOAT_EQ(ssm_softplus(-30.0f), static_cast<float>(std::exp(-30.0))) << "log(1 + e^v) would give 0";
}

TEST(SsmScanReference, OneTokenOnAZeroStateStoresDtXAlongB) {
  // S[p][n] = dt x[p] B[n], y[p] = dt x[p] (B . C) + D x[p], dt = softplus(0) = ln 2.
  const int32_t hd = 2, ds = 4;
  const float x[hd] = {1.0f, -2.0f}, b[ds] = {1.0f, 0.0f, 2.0f, 0.0f}, c[ds] = {0.5f, 7.0f, 1.0f, 7.0f};
  const float dt[1] = {std::log(2.0f)}, decay[1] = {0.25f};
  std::vector<float> state(hd * ds, 0.0f), y(hd);
  const SsmScanBlock block{x, hd, b, ds, c, ds, dt, decay, 0.5f, y.data(), hd, 1};
  ref::ssm_scan_block(block, hd, ds, state.data());
  for (int p = 0; p < hd; ++p) {
    EXPECT_FLOAT_EQ(y[static_cast<size_t>(p)], dt[0] * x[p] * 2.5f + 0.5f * x[p]) << p;
    for (int n = 0; n < ds; ++n) EXPECT_FLOAT_EQ(state[static_cast<size_t>(p * ds + n)], dt[0] * x[p] * b[n]);
  }
}

TEST(SsmScanReference, WithBZeroTheStateOnlyDecays) {
  const int32_t hd = 3, ds = 5;
  ScanInput in = make_scan_input(hd, ds, 1, 3);
  const std::vector<float> zeros(ds, 0.0f);
  const float dt[1] = {0.3f}, decay[1] = {0.25f};
  std::vector<float> state = in.state, y(hd);
  const SsmScanBlock block{in.x.data(), hd, zeros.data(), ds, in.c.data(), ds, dt, decay, 0.0f, y.data(), hd, 1};
  ref::ssm_scan_block(block, hd, ds, state.data());
  for (size_t i = 0; i < state.size(); ++i) EXPECT_FLOAT_EQ(state[i], 0.25f * in.state[i]) << i;
  for (int p = 0; p < hd; ++p) {
    double want = 0.0;
    for (int n = 0; n < ds; ++n) {
      want += 0.25 * in.state[static_cast<size_t>(p * ds + n)] * in.c[static_cast<size_t>(n)];
    }
    EXPECT_NEAR(y[static_cast<size_t>(p)], want, 1e-6) << p;
  }
}

TEST(SsmScanReference, ScalarRecurrenceMatchesDoublePrecision) {
  for (const HeadShape& shape : kScanShapes) {
    const ScanInput in = make_scan_input(shape.head_dim, shape.d_state, 3 * kScanChunk + 5,
                                         static_cast<uint32_t>(shape.head_dim * 1000 + shape.d_state));
    std::vector<float> y = scan_output_buffer(in), state = in.state;
    ssm_scan_recurrent_with(ssm_scan_kernels_for_isa(Isa::kScalar), scan_rows_of(in, y), in.rows, in.head_dim,
                            in.d_state, state.data());
    expect_scan_matches_double(in, y, state, kScanVsDouble, scan_label("scalar recurrent", in));
  }
}

TEST(SsmScan, PublicEntryPointsRunTheSelectedKernels) {
  const ScanInput in = make_scan_input(64, 128, 70, 5);
  std::vector<float> y = scan_output_buffer(in), expected = scan_output_buffer(in);
  std::vector<float> state = in.state, expected_state = in.state;
  ssm_scan_recurrent(scan_rows_of(in, y), in.rows, 64, 128, state.data());
  ssm_scan_recurrent_with(selected_ssm_scan_kernels(), scan_rows_of(in, expected), in.rows, 64, 128,
                          expected_state.data());
  EXPECT_EQ(y, expected);
  EXPECT_EQ(state, expected_state);
  SsmScanScratch scratch(kScanChunk, 64, 128);
  y = expected = scan_output_buffer(in);
  state = expected_state = in.state;
  ssm_scan_chunked(scan_rows_of(in, y), in.rows, 64, 128, state.data(), scratch);
  ssm_scan_chunked_with(selected_ssm_scan_kernels(), scan_rows_of(in, expected), in.rows, 64, 128,
                        expected_state.data(), scratch);
  EXPECT_EQ(y, expected);
  EXPECT_EQ(state, expected_state);
}

// Every tier, the references (kScalar) included, through both forms.
class SsmScanTiers : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!isa_supported(detect_cpu_features(), GetParam())) {
      GTEST_SKIP() << "this CPU lacks " << isa_name(GetParam()) << "; its kernels are not checked here";
    }
    kernels_ = ssm_scan_kernels_for_isa(GetParam());
    if (kernels_.block == nullptr) GTEST_SKIP() << isa_name(GetParam()) << " has no kernels of its own";
  }

  std::vector<float> recurrent(const ScanInput& in, std::vector<float>& state) const {
    std::vector<float> y = scan_output_buffer(in);
    ssm_scan_recurrent_with(kernels_, scan_rows_of(in, y), in.rows, in.head_dim, in.d_state, state.data());
    return y;
  }
  std::vector<float> chunked(const ScanInput& in, std::vector<float>& state, int32_t chunk = kScanChunk) const {
    std::vector<float> y = scan_output_buffer(in);
    SsmScanScratch scratch(chunk, in.head_dim, in.d_state);
    ssm_scan_chunked_with(kernels_, scan_rows_of(in, y), in.rows, in.head_dim, in.d_state, state.data(), scratch);
    return y;
  }

  SsmScanKernels kernels_;
};

TEST_P(SsmScanTiers, BlockMatchesTheReference) {
  for (const int32_t hd : {1, 8, 64}) {
    for (const int32_t ds : {8, 16, 24, 40, 64, 100, 128, 136, 200}) {
      for (const int64_t rows : {int64_t{1}, int64_t{5}}) {
        const ScanInput in = make_scan_input(hd, ds, rows, static_cast<uint32_t>(hd * 1000 + ds * 10 + rows));
        float dt[5], decay[5];
        for (int64_t t = 0; t < rows; ++t) {
          dt[t] = ssm_softplus(in.dt[static_cast<size_t>(2 * t)] + in.params.dt_bias);
          decay[t] = std::exp(dt[t] * in.params.a);
        }
        std::vector<float> y = scan_output_buffer(in), expected = scan_output_buffer(in);
        std::vector<float> state = in.state, expected_state = in.state;
        SsmScanBlock block{in.x.data(), in.x_stride, in.b.data(), in.bc_stride, in.c.data(), in.bc_stride, dt,
                           decay, in.params.d, expected.data(), in.x_stride, rows};
        ref::ssm_scan_block(block, hd, ds, expected_state.data());
        block.y = y.data();
        kernels_.block(block, hd, ds, state.data());
        const std::string what = scan_label("block", in);
        expect_scans_close(in, rows, y, expected, state, expected_state, kScanBlockVsReference, what);
        expect_gaps_untouched(in, y, what);
      }
    }
  }
}

TEST_P(SsmScanTiers, RecurrentMatchesDoublePrecision) {
  for (const HeadShape& shape : kScanShapes) {
    const ScanInput in = make_scan_input(shape.head_dim, shape.d_state, 3 * kScanChunk + 5,
                                         static_cast<uint32_t>(200 + shape.head_dim * 1000 + shape.d_state));
    std::vector<float> state = in.state;
    const std::vector<float> y = recurrent(in, state);
    expect_scan_matches_double(in, y, state, kScanVsDouble, scan_label("recurrent", in));
  }
}

TEST_P(SsmScanTiers, ChunkedMatchesRecurrentAndDoublePrecision) {
  for (const HeadShape& shape : kScanShapes) {
    for (const int64_t rows : {int64_t{1}, int64_t{kScanChunk - 1}, int64_t{kScanChunk}, int64_t{kScanChunk + 1},
                               int64_t{3 * kScanChunk + 5}}) {
      const ScanInput in = make_scan_input(shape.head_dim, shape.d_state, rows,
                                           static_cast<uint32_t>(300 + shape.head_dim * 1000 + shape.d_state + rows));
      std::vector<float> state = in.state, recurrent_state = in.state;
      const std::vector<float> y = chunked(in, state);
      expect_scan_matches_double(in, y, state, kScanVsDouble, scan_label("chunked", in));
      const std::vector<float> expected = recurrent(in, recurrent_state);
      expect_scans_close(in, rows, y, expected, state, recurrent_state, 2 * kScanVsDouble,
                         scan_label("chunked vs recurrent", in));
    }
  }
}

TEST_P(SsmScanTiers, BothFormsHandleStrongNoAndLinearSoftplusDecay) {
  // A = -60: rows decay by about e^-30, a chunk far below e^-80 (one exp per
  // pair); A = 0: nothing decays; dt_raw above 20: softplus is the identity.
  const std::pair<const char*, ScanParams> cases[] = {
      {"strong", ScanParams{-60.0f, -6.0f, 0.0f, 0.5f, 0.7f}},
      {"none", ScanParams{0.0f, -6.0f, 0.0f, 0.5f, 0.7f}},
      {"linear softplus", ScanParams{-0.5f, 20.0f, 24.0f, 0.5f, -0.3f}},
  };
  for (const auto& [name, params] : cases) {
    const ScanInput in = make_scan_input(64, 128, 2 * kScanChunk + 9, 11, params);
    std::vector<float> chunked_state = in.state, recurrent_state = in.state;
    const std::vector<float> y = chunked(in, chunked_state);
    expect_scan_matches_double(in, y, chunked_state, kScanVsDouble, scan_label(std::string("chunked, ") + name, in));
    const std::vector<float> y_recurrent = recurrent(in, recurrent_state);
    expect_scan_matches_double(in, y_recurrent, recurrent_state, kScanVsDouble,
                               scan_label(std::string("recurrent, ") + name, in));
  }
}

TEST_P(SsmScanTiers, ChunkedWorksForAnyChunkSize) {
  const ScanInput in = make_scan_input(32, 48, 50, 13);
  for (const int32_t chunk : {1, 2, 7, 16, 50, 128}) {
    std::vector<float> state = in.state;
    const std::vector<float> y = chunked(in, state, chunk);
    expect_scan_matches_double(in, y, state, kScanVsDouble, scan_label("chunk " + std::to_string(chunk), in));
  }
}

TEST_P(SsmScanTiers, RecurrentSplitIntoCallsIsBitExact) {
  // Cuts inside, at and past the kernels' 32-row blocks.
  const ScanInput in = make_scan_input(64, 128, 100, 17);
  std::vector<float> whole_state = in.state;
  const std::vector<float> whole = recurrent(in, whole_state);
  for (const int64_t first : {int64_t{1}, int64_t{31}, int64_t{32}, int64_t{37}, int64_t{99}}) {
    std::vector<float> y = scan_output_buffer(in), state = in.state;
    ssm_scan_recurrent_with(kernels_, scan_rows_of(in, y), first, 64, 128, state.data());
    ssm_scan_recurrent_with(kernels_, scan_rows_of(in, y, first), in.rows - first, 64, 128, state.data());
    EXPECT_EQ(y, whole) << first;
    EXPECT_EQ(state, whole_state) << first;
  }
}

TEST_P(SsmScanTiers, ChunkedCarriesStateAcrossCalls) {
  for (const HeadShape shape : {HeadShape{16, 16}, HeadShape{64, 128}}) {
    const ScanInput in = make_scan_input(shape.head_dim, shape.d_state, 2 * kScanChunk + 22,
                                         static_cast<uint32_t>(400 + shape.head_dim));
    std::vector<float> whole_state = in.state;
    const std::vector<float> whole = chunked(in, whole_state);
    SsmScanScratch scratch(kScanChunk, shape.head_dim, shape.d_state);
    for (const int64_t first : {int64_t{1}, int64_t{kScanChunk}, int64_t{kScanChunk + 30}}) {
      std::vector<float> y = scan_output_buffer(in), state = in.state;
      ssm_scan_chunked_with(kernels_, scan_rows_of(in, y), first, in.head_dim, in.d_state, state.data(), scratch);
      ssm_scan_chunked_with(kernels_, scan_rows_of(in, y, first), in.rows - first, in.head_dim, in.d_state,
                            state.data(), scratch);
      expect_scans_close(in, in.rows, y, whole, state, whole_state, 2 * kScanVsDouble,
                         scan_label("split at " + std::to_string(first), in));
    }
  }
}

TEST_P(SsmScanTiers, ChunkedSplitAtChunkBoundariesIsBitExact) {
  // Calls cut at multiples of the chunk size run the same chunks, and the
  // state crosses calls by exact transposes: the one call's bits.
  const ScanInput in = make_scan_input(64, 128, 3 * kScanChunk + 7, 23);
  std::vector<float> whole_state = in.state;
  const std::vector<float> whole = chunked(in, whole_state);
  SsmScanScratch scratch(kScanChunk, 64, 128);
  std::vector<float> y = scan_output_buffer(in), state = in.state;
  int64_t row = 0;
  for (const int64_t n : {int64_t{kScanChunk}, int64_t{2 * kScanChunk}, in.rows - 3 * kScanChunk}) {
    ssm_scan_chunked_with(kernels_, scan_rows_of(in, y, row), n, 64, 128, state.data(), scratch);
    row += n;
  }
  EXPECT_EQ(y, whole);
  EXPECT_EQ(state, whole_state);
}

TEST_P(SsmScanTiers, AMovedScratchStillWorks) {
  const ScanInput in = make_scan_input(32, 64, 40, 29);
  std::vector<float> expected_state = in.state, state = in.state;
  const std::vector<float> expected = chunked(in, expected_state, 16);
  std::vector<SsmScanScratch> scratches;
  scratches.emplace_back(16, 32, 64);
  scratches.emplace_back(16, 32, 64);  // may reallocate: the first one moves
  SsmScanScratch moved = std::move(scratches.front());
  std::vector<float> y = scan_output_buffer(in);
  ssm_scan_chunked_with(kernels_, scan_rows_of(in, y), in.rows, 32, 64, state.data(), moved);
  EXPECT_EQ(y, expected);
  EXPECT_EQ(state, expected_state);
}

TEST_P(SsmScanTiers, NoRowsChangeNothing) {
  const ScanInput in = make_scan_input(16, 16, 1, 19);
  std::vector<float> state = in.state, y = scan_output_buffer(in);
  SsmScanScratch scratch(kScanChunk, 16, 16);
  ssm_scan_recurrent_with(kernels_, scan_rows_of(in, y), 0, 16, 16, state.data());
  ssm_scan_chunked_with(kernels_, scan_rows_of(in, y), 0, 16, 16, state.data(), scratch);
  EXPECT_EQ(state, in.state);
  EXPECT_EQ(y, scan_output_buffer(in));
}

INSTANTIATE_TEST_SUITE_P(Tiers, SsmScanTiers, ::testing::Values(Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kAmx),
                         [](const ::testing::TestParamInfo<Isa>& tier) {
                           return std::string(isa_name(tier.param));
                         });

}  // namespace
}  // namespace met::cpu
