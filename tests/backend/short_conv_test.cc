// Tests for short_conv.h: the reference on hand-checked cases (with and
// without the conv bias) and against the convolution computed in double;
// every tier against the reference on random rows (widths, channel ranges
// and row counts that leave vector tails, with and without a bias); rows
// split across calls and channels split across calls give the one call's
// results.
// Tolerances: the state is copied, so bit for bit; y is the reference's
// own float sum (plus the bias) in every tier, so out differs only by the
// vector exp in
// silu: 2e-6 relative (as swiglu in ops_test.cc) plus 1e-37 (AVX2's exp
// flushes below e^-87). Reference vs double: 1e-5 of sum |x w| (a float
// sum of d_conv products) plus the silu's 1e-6.
#include "backend/cpu/kernels/short_conv.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "backend/cpu/kernels/reference/short_conv_ref.h"
#include "backend/cpu/kernels/short_conv_kernels.h"
#include "core/cpu_features.h"
#include "testing/random_data.h"

namespace met::cpu {
namespace {

struct Conv {
  int64_t rows = 0;
  int64_t channels = 0;
  int32_t d_conv = 4;
  int64_t x_stride = 0;  // > channels: the gap must not be read into results
  std::vector<float> x, kernel, state, bias;

  Conv(int64_t num_rows, int64_t num_channels, int32_t width, uint32_t seed)
      : rows(num_rows), channels(num_channels), d_conv(width), x_stride(num_channels + 5) {
    std::mt19937 rng(seed);
    met::testing::NormalFloat normal(0.0f, 1.0f);
    x.resize(static_cast<size_t>(rows * x_stride));
    kernel.resize(static_cast<size_t>(channels * d_conv));
    state.resize(static_cast<size_t>((d_conv - 1) * channels));
    bias.resize(static_cast<size_t>(channels));
    for (std::vector<float>* v : {&x, &kernel, &state, &bias}) {
      for (float& f : *v) f = 2.0f * normal(rng);
    }
  }
  int64_t out_stride() const { return channels + 2; }
  std::vector<float> out_buffer() const { return std::vector<float>(static_cast<size_t>(rows * out_stride()), 7.0f); }
};

// Runs `fn` over all rows and channels of `c`, updating `state`; with
// c.bias when `with_bias`.
std::vector<float> run(ShortConvFn fn, const Conv& c, std::vector<float>& state, bool with_bias = false) {
  std::vector<float> out = c.out_buffer();
  fn(c.x.data(), c.x_stride, c.rows, c.channels, 0, c.channels, c.kernel.data(), c.d_conv, state.data(), out.data(),
     c.out_stride(), with_bias ? c.bias.data() : nullptr);
  return out;
}

void expect_near_relative(const std::vector<float>& actual, const std::vector<float>& expected, double relative,
                          double absolute, const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size());
  int failures = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    const double bound = relative * std::fabs(expected[i]) + absolute;
    if (!(std::fabs(static_cast<double>(actual[i]) - expected[i]) <= bound) && ++failures <= 5) {
      ADD_FAILURE() << what << " [" << i << "] = " << actual[i] << ", reference " << expected[i];
    }
  }
}

TEST(ShortConvReference, SumsTheStateAndTheRowThroughTheTapsThenSilu) {
  // One channel, d_conv 4: state (1, 2, 3), x rows 4 and 5.
  const float kernel[] = {1.0f, 10.0f, 100.0f, 1000.0f};
  std::vector<float> state = {1.0f, 2.0f, 3.0f};
  const float x[] = {4.0f, 5.0f};
  float out[2] = {};
  ref::short_conv_silu(x, 1, 2, 1, 0, 1, kernel, 4, state.data(), out, 1, nullptr);
  const double y0 = 1 + 20 + 300 + 4000, y1 = 2 + 30 + 400 + 5000;
  EXPECT_FLOAT_EQ(out[0], static_cast<float>(y0 / (1.0 + std::exp(-y0))));
  EXPECT_FLOAT_EQ(out[1], static_cast<float>(y1 / (1.0 + std::exp(-y1))));
  EXPECT_EQ(state, (std::vector<float>{3.0f, 4.0f, 5.0f})) << "the last three inputs, oldest first";
}

TEST(ShortConvReference, OneRowShiftsTheStateByOne) {
  const float kernel[] = {0.0f, 0.0f, 0.0f, 1.0f};
  std::vector<float> state = {1.0f, 2.0f, 3.0f};
  const float x[] = {-2.0f};
  float out[1] = {};
  ref::short_conv_silu(x, 1, 1, 1, 0, 1, kernel, 4, state.data(), out, 1, nullptr);
  EXPECT_FLOAT_EQ(out[0], static_cast<float>(-2.0 / (1.0 + std::exp(2.0))));
  EXPECT_EQ(state, (std::vector<float>{2.0f, 3.0f, -2.0f}));
}

TEST(ShortConvReference, AddsTheBiasBeforeTheSilu) {
  // Two channels, d_conv 2: y = state + x (taps 1, 1), then + bias.
  const float kernel[] = {1.0f, 1.0f, 1.0f, 1.0f};
  const float bias[] = {-3.0f, 0.5f};
  std::vector<float> state = {1.0f, 2.0f};
  const float x[] = {1.0f, -1.0f};
  float out[2] = {};
  ref::short_conv_silu(x, 2, 1, 2, 0, 2, kernel, 2, state.data(), out, 2, bias);
  const double y0 = 1 + 1 - 3, y1 = 2 - 1 + 0.5;
  EXPECT_FLOAT_EQ(out[0], static_cast<float>(y0 / (1.0 + std::exp(-y0))));
  EXPECT_FLOAT_EQ(out[1], static_cast<float>(y1 / (1.0 + std::exp(-y1))));
  EXPECT_EQ(state, (std::vector<float>{1.0f, -1.0f})) << "the bias never enters the state";
}

// The reference's out against y computed in double (+ the bias when
// `with_bias`): within 1e-5 of sum |x w| plus 1e-6 of the result.
void expect_reference_matches_double(bool with_bias) {
  const Conv c(9, 13, 4, 3);
  std::vector<float> state = c.state;
  const std::vector<float> out = run(ref::short_conv_silu, c, state, with_bias);
  const int64_t keep = c.d_conv - 1;
  int failures = 0;
  for (int64_t r = 0; r < c.rows; ++r) {
    for (int64_t ch = 0; ch < c.channels; ++ch) {
      double y = 0.0, magnitude = 0.0;
      for (int64_t w = 0; w < c.d_conv; ++w) {
        const int64_t src = r + w;  // in the concatenation (state, x)
        const double in = src < keep ? c.state[static_cast<size_t>(src * c.channels + ch)]
                                     : c.x[static_cast<size_t>((src - keep) * c.x_stride + ch)];
        const double term = in * c.kernel[static_cast<size_t>(ch * c.d_conv + w)];
        y += term;
        magnitude += std::fabs(term);
      }
      if (with_bias) {
        y += c.bias[static_cast<size_t>(ch)];
        magnitude += std::fabs(c.bias[static_cast<size_t>(ch)]);
      }
      const double want = y / (1.0 + std::exp(-y));
      const double got = out[static_cast<size_t>(r * c.out_stride() + ch)];
      if (!(std::fabs(got - want) <= 1e-5 * magnitude + 1e-6 * std::fabs(want)) && ++failures <= 5) {
        ADD_FAILURE() << "row " << r << " channel " << ch << (with_bias ? " (bias)" : "") << ": " << got
                      << ", expected " << want;
      }
    }
  }
  for (int64_t s = 0; s < keep; ++s) {
    for (int64_t ch = 0; ch < c.channels; ++ch) {
      EXPECT_EQ(state[static_cast<size_t>(s * c.channels + ch)],
                c.x[static_cast<size_t>((c.rows - keep + s) * c.x_stride + ch)]);
    }
  }
}

TEST(ShortConvReference, MatchesTheConvolutionInDouble) { expect_reference_matches_double(false); }

TEST(ShortConvReference, MatchesTheConvolutionWithBiasInDouble) { expect_reference_matches_double(true); }

class ShortConvTiers : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!isa_supported(detect_cpu_features(), GetParam())) {
      GTEST_SKIP() << "this CPU lacks " << isa_name(GetParam()) << "; its kernel is not checked here";
    }
    kernel_ = short_conv_kernel_for_isa(GetParam());
    if (kernel_ == nullptr) GTEST_SKIP() << isa_name(GetParam()) << " has no kernel of its own";
  }
  ShortConvFn kernel_ = nullptr;
};

TEST_P(ShortConvTiers, MatchesTheReference) {
  for (const int32_t d_conv : {1, 2, 3, 4, 8}) {
    for (const int64_t rows : {1, 2, 5, 40}) {
      for (const int64_t channels : {1, 7, 16, 33, 100}) {
        for (const bool with_bias : {false, true}) {
          const Conv c(rows, channels, d_conv, static_cast<uint32_t>(d_conv * 1000 + rows * 100 + channels));
          std::vector<float> state = c.state, expected_state = c.state;
          const std::vector<float> expected = run(ref::short_conv_silu, c, expected_state, with_bias);
          const std::vector<float> out = run(kernel_, c, state, with_bias);
          const std::string what = "d_conv " + std::to_string(d_conv) + ", " + std::to_string(rows) + " rows, " +
                                   std::to_string(channels) + " channels" + (with_bias ? ", bias" : "");
          expect_near_relative(out, expected, 2e-6, 1e-37, what);
          EXPECT_EQ(state, expected_state) << what;
        }
      }
    }
  }
}

TEST_P(ShortConvTiers, AChannelRangeTouchesOnlyItsChannels) {
  const Conv c(6, 50, 4, 21);
  for (const float* bias : {static_cast<const float*>(nullptr), c.bias.data()}) {
    std::vector<float> state = c.state, expected_state = c.state;
    std::vector<float> out = c.out_buffer(), expected = c.out_buffer();
    ref::short_conv_silu(c.x.data(), c.x_stride, c.rows, c.channels, 3, 29, c.kernel.data(), 4,
                         expected_state.data(), expected.data(), c.out_stride(), bias);
    kernel_(c.x.data(), c.x_stride, c.rows, c.channels, 3, 29, c.kernel.data(), 4, state.data(), out.data(),
            c.out_stride(), bias);
    expect_near_relative(out, expected, 2e-6, 1e-37, bias != nullptr ? "channels [3, 29), bias" : "channels [3, 29)");
    EXPECT_EQ(state, expected_state);
  }
}

TEST_P(ShortConvTiers, RowsSplitAcrossCallsGiveTheOneCallsResult) {
  const Conv c(11, 37, 4, 23);
  std::vector<float> whole_state = c.state;
  const std::vector<float> whole = run(kernel_, c, whole_state, true);
  // Splits with pieces shorter than d_conv - 1 (the state alone feeds a row).
  for (const std::vector<int64_t>& pieces : {std::vector<int64_t>{1, 1, 1, 1, 7}, {2, 9}, {5, 6}, {10, 1}}) {
    std::vector<float> state = c.state, out = c.out_buffer();
    int64_t row = 0;
    for (const int64_t n : pieces) {
      kernel_(c.x.data() + row * c.x_stride, c.x_stride, n, c.channels, 0, c.channels, c.kernel.data(), c.d_conv,
              state.data(), out.data() + row * c.out_stride(), c.out_stride(), c.bias.data());
      row += n;
    }
    EXPECT_EQ(out, whole) << pieces.size() << " pieces";
    EXPECT_EQ(state, whole_state) << pieces.size() << " pieces";
  }
}

TEST_P(ShortConvTiers, ChannelsSplitAcrossCallsGiveTheOneCallsResult) {
  const Conv c(9, 70, 4, 29);
  std::vector<float> whole_state = c.state;
  const std::vector<float> whole = run(kernel_, c, whole_state, true);
  std::vector<float> state = c.state, out = c.out_buffer();
  for (const auto& [begin, end] : {std::pair<int64_t, int64_t>{0, 5}, {5, 21}, {21, 21}, {21, 64}, {64, 70}}) {
    kernel_(c.x.data(), c.x_stride, c.rows, c.channels, begin, end, c.kernel.data(), c.d_conv, state.data(),
            out.data(), c.out_stride(), c.bias.data());
  }
  EXPECT_EQ(out, whole);
  EXPECT_EQ(state, whole_state);
}

INSTANTIATE_TEST_SUITE_P(Tiers, ShortConvTiers, ::testing::Values(Isa::kAvx2, Isa::kAvx512, Isa::kAmx),
                         [](const ::testing::TestParamInfo<Isa>& tier) {
                           return std::string(isa_name(tier.param));
                         });

TEST(ShortConv, PublicEntryPointRunsTheSelectedKernel) {
  const Conv c(4, 40, 4, 31);
  std::vector<float> state = c.state, expected_state = c.state;
  std::vector<float> out = c.out_buffer();
  short_conv_silu(c.x.data(), c.x_stride, c.rows, c.channels, 0, c.channels, c.kernel.data(), c.d_conv, state.data(),
                  out.data(), c.out_stride());
  EXPECT_EQ(out, run(selected_short_conv_kernel(), c, expected_state));
  EXPECT_EQ(state, expected_state);
}

TEST(ShortConv, PublicEntryPointPassesTheBias) {
  const Conv c(4, 40, 4, 37);
  std::vector<float> state = c.state, expected_state = c.state;
  std::vector<float> out = c.out_buffer();
  short_conv_silu(c.x.data(), c.x_stride, c.rows, c.channels, 0, c.channels, c.kernel.data(), c.d_conv, state.data(),
                  out.data(), c.out_stride(), c.bias.data());
  EXPECT_EQ(out, run(selected_short_conv_kernel(), c, expected_state, true));
  EXPECT_EQ(state, expected_state);
  std::vector<float> unbiased_state = c.state;
  EXPECT_NE(out, run(selected_short_conv_kernel(), c, unbiased_state, false)) << "the bias must change the result";
}

}  // namespace
}  // namespace met::cpu
