// Tests for lora.h: the reference against shrink and expand computed in
// double; every tier against the reference on random data (ranks, widths and
// output ranges that leave vector tails; rows named out of order, strides
// with gaps that must stay untouched); an output range split across calls
// gives the one call's results; the public entry points run the selected
// tier and check their contracts.
// Tolerances: float sums of n products against double: 1e-5 of sum |a x|
// (n up to 1100); tiers against the reference: the same bound, since they
// group the sums differently. F16 storage is checked the same way, and its
// reference equals the F32 reference on the same values exactly.
#include "backend/cpu/kernels/lora.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/kernels/lora_kernels.h"
#include "backend/lora_adapter.h"
#include "core/cpu_features.h"
#include "tensor/half.h"
#include "testing/random_data.h"

namespace met::cpu {
namespace {

struct LoraCase {
  int32_t rank = 0;
  int64_t cols = 0;  // A's inputs
  int64_t outs = 0;  // B's outputs
  int64_t num_rows = 0;
  std::vector<float> a, bp, x, t, y;  // bp: B in panels (lora_panel_index)
  std::vector<uint16_t> a16, bp16;  // a and bp rounded to F16 (f16 storage)
  std::vector<int32_t> rows;  // a subset, out of order
  int64_t x_stride() const { return cols + 3; }
  int64_t t_stride() const { return rank + 2; }
  int64_t y_stride() const { return outs + 5; }

  LoraCase(int32_t r, int64_t c, int64_t o, int64_t n, uint32_t seed) : rank(r), cols(c), outs(o), num_rows(n) {
    std::mt19937 rng(seed);
    met::testing::NormalFloat normal(0.0f, 1.0f);
    a.resize(static_cast<size_t>(rank * cols));
    bp.resize(static_cast<size_t>(lora_panel_floats(outs, rank)));
    x.resize(static_cast<size_t>(num_rows * x_stride()));
    t.resize(static_cast<size_t>(num_rows * t_stride()));
    y.resize(static_cast<size_t>(num_rows * y_stride()));
    for (std::vector<float>* v : {&a, &bp, &x, &t, &y}) {
      for (float& f : *v) f = normal(rng);
    }
    for (int64_t i = num_rows - 1; i >= 0; i -= 2) rows.push_back(static_cast<int32_t>(i));
    for (auto [from, to] : {std::pair{&a, &a16}, std::pair{&bp, &bp16}}) {
      for (float v : *from) to->push_back(f32_to_fp16(v));
    }
  }
  // With `f16`, a and bp become their F16 values (F32 copies of a16, bp16).
  void round_to_f16() {
    for (size_t i = 0; i < a.size(); ++i) a[i] = fp16_to_f32(a16[i]);
    for (size_t i = 0; i < bp.size(); ++i) bp[i] = fp16_to_f32(bp16[i]);
  }
  const void* a_of(bool f16) const { return f16 ? static_cast<const void*>(a16.data()) : a.data(); }
  const void* bp_of(bool f16) const { return f16 ? static_cast<const void*>(bp16.data()) : bp.data(); }
};

// The bound for a float sum of `n` products p_i: 1e-5 of sum |p_i|.
double bound(double abs_sum) { return 1e-5 * abs_sum + 1e-30; }

TEST(LoraReference, ShrinkAndExpandMatchDouble) {
  LoraCase c(5, 37, 29, 6, 1);
  std::vector<float> t = c.t, y = c.y;
  ref::lora_shrink(c.a.data(), false, c.rank, c.cols, c.x.data(), c.x_stride(), c.rows.data(),
                   static_cast<int64_t>(c.rows.size()), t.data(), c.t_stride());
  ref::lora_expand(c.bp.data(), false, c.rank, c.outs, 0.75f, t.data(), c.t_stride(), c.rows.data(),
                   static_cast<int64_t>(c.rows.size()), y.data(), c.y_stride(), 0, c.outs);
  for (int32_t r : c.rows) {
    for (int32_t k = 0; k < c.rank; ++k) {
      double want = 0, abs_sum = 0;
      for (int64_t i = 0; i < c.cols; ++i) {
        const double p =
            double{c.a[static_cast<size_t>(k * c.cols + i)]} * c.x[static_cast<size_t>(r * c.x_stride() + i)];
        want += p;
        abs_sum += std::fabs(p);
      }
      EXPECT_NEAR(t[static_cast<size_t>(r * c.t_stride() + k)], want, bound(abs_sum));
    }
    for (int64_t o = 0; o < c.outs; ++o) {
      double sum = 0, abs_sum = 0;
      for (int32_t k = 0; k < c.rank; ++k) {
        const double p =
            double{t[static_cast<size_t>(r * c.t_stride() + k)]} * c.bp[static_cast<size_t>(lora_panel_index(o, k, c.rank))];
        sum += p;
        abs_sum += std::fabs(p);
      }
      const size_t at = static_cast<size_t>(r * c.y_stride() + o);
      EXPECT_NEAR(y[at], c.y[at] + 0.75 * sum, bound(0.75 * abs_sum + std::fabs(c.y[at])));
    }
  }
  // Rows 0, 2 and 4 are not named: they keep their values.
  for (int64_t r = 0; r < c.num_rows; r += 2) {
    for (int64_t k = 0; k < c.t_stride(); ++k) {
      const auto at = static_cast<size_t>(r * c.t_stride() + k);
      EXPECT_EQ(t[at], c.t[at]);
    }
    for (int64_t o = 0; o < c.y_stride(); ++o) {
      const auto at = static_cast<size_t>(r * c.y_stride() + o);
      EXPECT_EQ(y[at], c.y[at]);
    }
  }
}

class LoraTiers : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!isa_supported(detect_cpu_features(), GetParam())) {
      GTEST_SKIP() << "this CPU lacks " << isa_name(GetParam()) << "; its kernels are not checked here";
    }
    kernels_ = lora_kernels_for_isa(GetParam());
    if (kernels_.shrink == nullptr) GTEST_SKIP() << isa_name(GetParam()) << " has no kernels of its own";
  }
  LoraKernels kernels_;
};

TEST_P(LoraTiers, MatchTheReference) {
  const LoraKernels reference = lora_kernels_for_isa(Isa::kScalar);
  uint32_t seed = 10;
  for (const bool f16 : {false, true}) {
    for (const int32_t rank : {1, 3, 4, 8, 16, 17, 64}) {
      for (const int64_t cols : {1, 7, 16, 100, 1100}) {
        const int64_t outs = cols + 31;
        LoraCase c(rank, cols, outs, 11, seed++);  // 6 rows: a block of 4 and one of 2
        const auto n = static_cast<int64_t>(c.rows.size());
        std::vector<float> t_ref = c.t, t_got = c.t;
        reference.shrink(c.a_of(f16), f16, rank, cols, c.x.data(), c.x_stride(), c.rows.data(), n, t_ref.data(),
                         c.t_stride());
        kernels_.shrink(c.a_of(f16), f16, rank, cols, c.x.data(), c.x_stride(), c.rows.data(), n, t_got.data(),
                        c.t_stride());
        for (size_t i = 0; i < t_ref.size(); ++i) {
          ASSERT_NEAR(t_got[i], t_ref[i], 1e-5 * std::sqrt(static_cast<double>(cols)) * 4 + 1e-6)
              << "shrink f16 " << f16 << " rank " << rank << " cols " << cols << " at " << i;
        }
        // Expand over a range that starts and ends off the vector width.
        const int64_t o0 = outs > 3 ? 3 : 0, o1 = outs - 1;
        std::vector<float> y_ref = c.y, y_got = c.y;
        reference.expand(c.bp_of(f16), f16, rank, outs, 0.5f, t_ref.data(), c.t_stride(), c.rows.data(), n,
                         y_ref.data(), c.y_stride(), o0, o1);
        kernels_.expand(c.bp_of(f16), f16, rank, outs, 0.5f, t_ref.data(), c.t_stride(), c.rows.data(), n,
                        y_got.data(), c.y_stride(), o0, o1);
        for (size_t i = 0; i < y_ref.size(); ++i) {
          ASSERT_NEAR(y_got[i], y_ref[i], 1e-4 * std::sqrt(static_cast<double>(rank)) * 4 + 1e-6)
              << "expand f16 " << f16 << " rank " << rank << " outs " << outs << " at " << i;
          if (y_ref[i] == c.y[i]) {
            EXPECT_EQ(y_got[i], c.y[i]) << "expand wrote outside its range at " << i;
          }
        }
      }
    }
  }
}

TEST_P(LoraTiers, AnOutputRangeSplitAcrossCallsGivesOneCallsResults) {
  LoraCase c(16, 64, 200, 4, 99);
  const auto n = static_cast<int64_t>(c.rows.size());
  std::vector<float> whole = c.y, split = c.y;
  kernels_.expand(c.bp.data(), false, c.rank, c.outs, 2.0f, c.t.data(), c.t_stride(), c.rows.data(), n, whole.data(),
                  c.y_stride(), 0, c.outs);
  for (int64_t o = 0; o < c.outs; o += 37) {
    kernels_.expand(c.bp.data(), false, c.rank, c.outs, 2.0f, c.t.data(), c.t_stride(), c.rows.data(), n, split.data(),
                    c.y_stride(), o, o + 37 < c.outs ? o + 37 : c.outs);
  }
  EXPECT_EQ(whole, split);
}

INSTANTIATE_TEST_SUITE_P(Tiers, LoraTiers, ::testing::Values(Isa::kAvx2, Isa::kAvx512, Isa::kAmx),
                         [](const ::testing::TestParamInfo<Isa>& tier) { return std::string(isa_name(tier.param)); });

TEST(LoraReference, F16StorageGivesTheF32ResultsOfItsValues) {
  LoraCase c(8, 50, 40, 4, 3);
  c.round_to_f16();
  const auto run = [&](bool f16) {
    std::pair<std::vector<float>, std::vector<float>> ty{c.t, c.y};
    const auto n = static_cast<int64_t>(c.rows.size());
    ref::lora_shrink(c.a_of(f16), f16, c.rank, c.cols, c.x.data(), c.x_stride(), c.rows.data(), n,
                     ty.first.data(), c.t_stride());
    ref::lora_expand(c.bp_of(f16), f16, c.rank, c.outs, 1.0f, ty.first.data(), c.t_stride(), c.rows.data(), n,
                     ty.second.data(), c.y_stride(), 0, c.outs);
    return ty;
  };
  EXPECT_EQ(run(true), run(false));
}

TEST(Lora, PublicEntryPointsRunTheSelectedKernelsAndCheckTheirContracts) {
  LoraCase c(4, 40, 50, 3, 5);
  std::vector<float> t_ref = c.t, t_got = c.t, y_ref = c.y, y_got = c.y;
  const LoraKernels& selected = selected_lora_kernels();
  const auto n = static_cast<int64_t>(c.rows.size());
  selected.shrink(c.a.data(), false, c.rank, c.cols, c.x.data(), c.x_stride(), c.rows.data(), n, t_ref.data(), c.t_stride());
  lora_shrink(c.a.data(), false, c.rank, c.cols, c.x.data(), c.x_stride(), c.rows, t_got.data(), c.t_stride());
  EXPECT_EQ(t_ref, t_got);
  selected.expand(c.bp.data(), false, c.rank, c.outs, 1.0f, t_ref.data(), c.t_stride(), c.rows.data(), n, y_ref.data(),
                  c.y_stride(), 0, c.outs);
  lora_expand(c.bp.data(), false, c.rank, c.outs, 1.0f, t_ref.data(), c.t_stride(), c.rows, y_got.data(), c.y_stride(), 0,
              c.outs);
  EXPECT_EQ(y_ref, y_got);
  EXPECT_DEATH(lora_expand(c.bp.data(), false, c.rank, c.outs, 1.0f, t_ref.data(), c.t_stride(), c.rows, y_got.data(),
                           c.y_stride(), 0, c.outs + 1),
               "lora_expand: rank 4, outputs \\[0, 51\\) of 50");
}

}  // namespace
}  // namespace met::cpu
