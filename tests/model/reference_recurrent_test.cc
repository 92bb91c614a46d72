// Tests for the reference recurrence (tests/testing/reference_recurrent.h),
// against values worked out by hand: the short convolution's taps and rolling
// state, and the gated delta rule's write, overwrite, decay and head mapping.
#include "testing/reference_recurrent.h"

#include <cmath>

#include <gtest/gtest.h>

namespace met::reference_recurrent_test {
namespace {

using testing::GatedDeltaShape;
using testing::Rows;

// Channel 0 passes its input through (only the last tap); channel 1 delays
// it by two tokens (only the first tap).
constexpr float kKernel[] = {0, 0, 1, 1, 0, 0};

TEST(ShortConv, TapsReadTheStateBeforeTheFirstInput) {
  std::vector<double> state = {0, 0, 7, 8};  // channel 1 last saw 7 then 8
  const Rows x = {{1, 10}, {2, 20}, {3, 30}};
  const Rows y = testing::short_conv(kKernel, 3, x, state);
  EXPECT_EQ(y, (Rows{{1, 7}, {2, 8}, {3, 10}}));
  EXPECT_EQ(state, (std::vector<double>{2, 3, 20, 30}));  // the last two inputs, oldest first
}

TEST(ShortConv, ChunksCarryTheStateExactly) {
  const float kernel[] = {0.5f, -1.0f, 0.25f, 2.0f, 1.0f, 0.0f, -0.5f, 3.0f};  // d_conv 4
  const Rows x = {{1, 2}, {-3, 4}, {5, 0.5}, {7, -1}, {2, 2}};
  std::vector<double> whole(6, 0.0), split(6, 0.0);
  const Rows all = testing::short_conv(kernel, 4, x, whole);
  Rows parts = testing::short_conv(kernel, 4, Rows(x.begin(), x.begin() + 2), split);
  for (const auto& row : testing::short_conv(kernel, 4, Rows(x.begin() + 2, x.end()), split)) parts.push_back(row);
  EXPECT_EQ(all, parts);
  EXPECT_EQ(whole, split);
  EXPECT_DOUBLE_EQ(all[4][0], 0.5 * -3 + -1.0 * 5 + 0.25 * 7 + 2.0 * 2);
}

TEST(GatedDeltaRule, FirstTokenWritesBetaVAtItsKey) {
  const GatedDeltaShape shape{1, 1, 2};
  std::vector<double> state(4, 0.0);
  const Rows o = testing::gated_delta_rule(shape, {{0.6, 0.8}}, {{1, 0}}, {{2, -1}}, {{0.0}}, {{0.5}}, state);
  // S = k (beta v)ᵀ; o = Sᵀq / sqrt(2) = beta v (k·q) / sqrt(2).
  EXPECT_EQ(state, (std::vector<double>{1, -0.5, 0, 0}));
  EXPECT_NEAR(o[0][0], 0.5 * 2 * 0.6 / std::sqrt(2.0), 1e-15);
  EXPECT_NEAR(o[0][1], 0.5 * -1 * 0.6 / std::sqrt(2.0), 1e-15);
}

TEST(GatedDeltaRule, FullBetaOverwritesWhatAKeyHolds) {
  const GatedDeltaShape shape{1, 1, 3};
  std::vector<double> state(9, 0.0);
  const double s = 1 / std::sqrt(3.0);
  const std::vector<double> k = {s, s, s};
  const Rows o = testing::gated_delta_rule(shape, {k, k}, {k, k}, {{1, 2, 3}, {-4, 0.5, 9}}, {{0}, {0}}, {{1}, {1}},
                                           state);
  // Reading at the key returns the value written last: the delta rule
  // replaces, not adds.
  for (size_t j = 0; j < 3; ++j) EXPECT_NEAR(o[1][j] * std::sqrt(3.0), (std::vector<double>{-4, 0.5, 9})[j], 1e-12);
  for (size_t j = 0; j < 3; ++j) EXPECT_NEAR(o[0][j] * std::sqrt(3.0), (std::vector<double>{1, 2, 3})[j], 1e-12);
}

TEST(GatedDeltaRule, ZeroBetaOnlyDecaysTheState) {
  const GatedDeltaShape shape{1, 1, 2};
  std::vector<double> state = {1, 2, 3, 4};  // S[i][j]
  const Rows o = testing::gated_delta_rule(shape, {{1, 0}}, {{0, 1}}, {{5, 5}}, {{std::log(0.5)}}, {{0}}, state);
  const std::vector<double> decayed = {0.5, 1, 1.5, 2};
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(state[i], decayed[i], 1e-15);
  EXPECT_NEAR(o[0][0], 0.5 / std::sqrt(2.0), 1e-15);  // (Sᵀq)_0 = S[0][0]
  EXPECT_NEAR(o[0][1], 1.0 / std::sqrt(2.0), 1e-15);
}

TEST(GatedDeltaRule, ValueHeadReadsKeyHeadModuloTheKeyHeads) {
  const GatedDeltaShape shape{2, 4, 2};
  std::vector<double> state(4 * 4, 0.0);
  // Key head 0 finds its query (k·q = 1); key head 1 does not (k·q = 0).
  const Rows q = {{1, 0, 0, 1}}, k = {{1, 0, 1, 0}};
  const Rows v = {{1, 1, 2, 2, 3, 3, 4, 4}};
  const Rows o = testing::gated_delta_rule(shape, q, k, v, {{0, 0, 0, 0}}, {{1, 1, 1, 1}}, state);
  const double r = 1 / std::sqrt(2.0);
  EXPECT_EQ(o[0], (std::vector<double>{r, r, 0, 0, 3 * r, 3 * r, 0, 0}));  // heads 0, 2 read key head 0
}

}  // namespace
}  // namespace met::reference_recurrent_test
