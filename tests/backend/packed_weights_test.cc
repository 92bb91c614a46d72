// Tests for packed_weights.h and the kernels that read packed layouts:
// packing is exact (every row unpacks to its GGUF bytes, padding rows
// included in the byte count), and each tier's packed kernel matches the
// scalar reference run on the row-major original (ref::matmul_q8_0, the
// oracle), on random data over many shapes: m = 1 .. 9 and 64 (every row
// tile and a remainder), odd block counts, row counts that leave a partial
// last group, odd output ranges and splits at every offset within a group;
// a row's outputs are bit-identical alone or in a batch.
// Tolerance as matmul_test.cc's integer paths: 4e-6 of sum_k |w_k a_k|.
#include "backend/cpu/kernels/packed_weights.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "backend/cpu/kernels/matmul_dispatch.h"
#include "core/cpu_features.h"
#include "tensor/block_types.h"
#include "tensor/half.h"
#include "tensor/quantize.h"
#include "tensor/tensor_testing.h"

namespace met::cpu {
namespace {

constexpr double kPackTolerance = 4e-6;
constexpr float kPackCanary = -12345.0f;

struct RowMajor {
  std::vector<uint8_t> bytes;
  WeightMatrix w;
};

// Random Q8_0 rows of varied scale, with code extremes (-128 can only come
// from hand-made bytes: the quantizer stops at -127) in row 0.
RowMajor random_q8_0(int64_t rows, int64_t cols, uint32_t seed) {
  const size_t row_bytes = *ggml_row_bytes(GgmlType::kQ8_0, static_cast<uint64_t>(cols));
  RowMajor out{std::vector<uint8_t>(row_bytes * static_cast<size_t>(rows)), {}};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> log_scale(-4.0f, 1.0f);
  for (int64_t n = 0; n < rows; ++n) {
    const std::vector<float> x =
        testing::gaussian_with_outliers(static_cast<size_t>(cols), seed * 131 + static_cast<uint32_t>(n), std::exp(log_scale(rng)));
    std::span<uint8_t> dst(out.bytes.data() + static_cast<size_t>(n) * row_bytes, row_bytes);
    EXPECT_TRUE(quantize_row(GgmlType::kQ8_0, x, dst).ok());
  }
  auto* first = reinterpret_cast<BlockQ8_0*>(out.bytes.data());
  first[0].qs[0] = -128;
  first[0].qs[1] = 127;
  out.w = {GgmlType::kQ8_0, out.bytes.data(), rows, cols, row_bytes};
  return out;
}

TEST(PackedWeights, Q8_0x16UnpacksToTheSameRows) {
  for (const int64_t rows : {1, 15, 16, 17, 40}) {
    for (const int64_t cols : {32, 64, 96, 160, 1056}) {
      const RowMajor src = random_q8_0(rows, cols, static_cast<uint32_t>(rows * 7 + cols));
      const PackedMatrix packed = PackedMatrix::pack(src.w, WeightLayout::kQ8_0x16);
      const WeightMatrix& p = packed.matrix();
      EXPECT_EQ(p.layout, WeightLayout::kQ8_0x16);
      EXPECT_EQ(p.rows, rows);
      EXPECT_EQ(p.cols, cols);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p.data) % 64, 0u);
      std::vector<uint8_t> row(src.w.row_bytes);
      for (int64_t n = 0; n < rows; ++n) {
        unpack_row(p, n, row.data());
        EXPECT_EQ(
            std::memcmp(row.data(), src.bytes.data() + static_cast<size_t>(n) * src.w.row_bytes, row.size()),
            0)
            << "rows=" << rows << " cols=" << cols << " row " << n;
      }
    }
  }
}

TEST(PackedWeights, Q8_0x16TakesWholeGroupsOfCacheLines) {
  EXPECT_EQ(q8_0x16_group_bytes(64), 1088u);         // one pair of blocks
  EXPECT_EQ(q8_0x16_group_bytes(96), 1088u + 576u);  // and an odd block
  EXPECT_EQ(q8_0x16_group_bytes(4096), 64u * 1088u);
  // Same bytes as the row-major matrix once rows fill whole groups.
  EXPECT_EQ(layout_bytes(WeightLayout::kQ8_0x16, GgmlType::kQ8_0, 32, 4096),
            layout_bytes(WeightLayout::kRows, GgmlType::kQ8_0, 32, 4096));
  EXPECT_EQ(layout_bytes(WeightLayout::kQ8_0x16, GgmlType::kQ8_0, 17, 64), 2u * 1088u);
  EXPECT_EQ(layout_groups(WeightLayout::kQ8_0x16, 17), 2);
}

TEST(PackedWeights, PreferredLayoutHasASelectedKernel) {
  for (const GgmlType type : {GgmlType::kF32, GgmlType::kF16, GgmlType::kBF16, GgmlType::kQ8_0,
                              GgmlType::kQ4_0, GgmlType::kQ4_K, GgmlType::kQ6_K}) {
    const WeightLayout layout = preferred_layout(type);
    if (layout != WeightLayout::kRows) {
      EXPECT_NE(selected_matmul_kernels(type).matmul_packed, nullptr) << ggml_type_name(type);
    }
  }
  EXPECT_EQ(preferred_layout(GgmlType::kF16), WeightLayout::kRows);
}

struct PackProblem {
  RowMajor rows;
  PackedMatrix packed;
  int64_t m = 0;
  std::vector<uint8_t> act;  // prepared by the reference
};

PackProblem make_problem(int64_t m, int64_t rows, int64_t cols, uint32_t seed) {
  PackProblem p{random_q8_0(rows, cols, seed), {}, m, {}};
  p.packed = PackedMatrix::pack(p.rows.w, WeightLayout::kQ8_0x16);
  const std::vector<float> x = testing::gaussian_with_outliers(static_cast<size_t>(m * cols), seed + 7, 1.0f);
  p.act.resize(static_cast<size_t>(m) * activation_row_bytes(GgmlType::kQ8_0, cols));
  prepare_activations_with(matmul_kernels_for_isa(GgmlType::kQ8_0, Isa::kScalar), GgmlType::kQ8_0, x.data(),
                           cols, cols, 0, m, p.act.data());
  return p;
}

std::vector<float> run(const MatmulKernels& kernels, const WeightMatrix& w, const PackProblem& p, int64_t n_begin,
                       int64_t n_end) {
  std::vector<float> y(static_cast<size_t>(p.m * w.rows), kPackCanary);
  matmul_with(kernels, w, p.act.data(), p.m, y.data(), w.rows, n_begin, n_end);
  return y;
}

// sum_k |w_k a_k| per output (the scale errors are measured against), from
// the codes and scales.
std::vector<double> pack_magnitudes(const PackProblem& p) {
  const int64_t cols = p.rows.w.cols, num_blocks = cols / kQk;
  const size_t act_row = activation_row_bytes(GgmlType::kQ8_0, cols);
  std::vector<double> out(static_cast<size_t>(p.m * p.rows.w.rows));
  for (int64_t i = 0; i < p.m; ++i) {
    const auto* a = reinterpret_cast<const BlockQ8_0*>(p.act.data() + static_cast<size_t>(i) * act_row);
    for (int64_t n = 0; n < p.rows.w.rows; ++n) {
      const auto* w = reinterpret_cast<const BlockQ8_0*>(p.rows.bytes.data() +
                                                         static_cast<size_t>(n) * p.rows.w.row_bytes);
      double sum = 0.0;
      for (int64_t b = 0; b < num_blocks; ++b) {
        int isum = 0;
        for (int k = 0; k < kQk; ++k) isum += std::abs(w[b].qs[k] * a[b].qs[k]);
        sum += std::fabs(static_cast<double>(fp16_to_f32(w[b].d)) * fp16_to_f32(a[b].d)) * isum;
      }
      out[static_cast<size_t>(i * p.rows.w.rows + n)] = sum;
    }
  }
  return out;
}

void expect_close(const PackProblem& p, const std::vector<float>& actual, const std::vector<float>& expected,
                  int64_t n_begin, int64_t n_end, const std::string& what) {
  const std::vector<double> magnitude = pack_magnitudes(p);
  const int64_t rows = p.rows.w.rows;
  int failures = 0;
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t n = 0; n < rows; ++n) {
      const auto idx = static_cast<size_t>(i * rows + n);
      if (n < n_begin || n >= n_end) {
        if (actual[idx] != kPackCanary && ++failures < 5)
          ADD_FAILURE() << what << " wrote y[" << i << "][" << n << "]";
        continue;
      }
      const double error = std::fabs(static_cast<double>(actual[idx]) - expected[idx]);
      if (!(error <= kPackTolerance * magnitude[idx] + 1e-30) && ++failures < 5) {
        ADD_FAILURE() << what << " y[" << i << "][" << n << "] = " << actual[idx] << ", reference "
                      << expected[idx] << ", error " << error / (magnitude[idx] + 1e-300) << " of sum|w a|";
      }
    }
  }
  EXPECT_EQ(failures, 0) << what;
}

class PackedKernels : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (best_isa(detect_cpu_features()) < GetParam()) {
      GTEST_SKIP() << "this CPU lacks " << isa_name(GetParam()) << "; its kernels are not checked here";
    }
    kernels_ = matmul_kernels_for_isa(GgmlType::kQ8_0, GetParam());
    if (kernels_.matmul_packed == nullptr) {
      GTEST_SKIP() << isa_name(GetParam()) << " has no packed Q8_0 kernel";
    }
    kernels_.prepare = matmul_kernels_for_isa(GgmlType::kQ8_0, Isa::kScalar).prepare;
  }
  MatmulKernels kernels_;
  const MatmulKernels reference_ = matmul_kernels_for_isa(GgmlType::kQ8_0, Isa::kScalar);
};

std::string describe(int64_t m, int64_t rows, int64_t cols, int64_t n_begin, int64_t n_end) {
  return "m=" + std::to_string(m) + " rows=" + std::to_string(rows) + " cols=" + std::to_string(cols) +
         " n=[" + std::to_string(n_begin) + "," + std::to_string(n_end) + ")";
}

TEST_P(PackedKernels, Q8_0x16MatchesTheReferenceOnManyShapes) {
  for (const int64_t rows : {16, 37}) {
    for (const int64_t cols : {32, 64, 96, 160, 512, 1056}) {
      for (const int64_t m : {1, 2, 3, 4, 5, 7, 9, 64}) {
        const PackProblem p = make_problem(m, rows, cols, static_cast<uint32_t>(m * 1000 + cols + rows));
        const std::vector<float> expected = run(reference_, p.rows.w, p, 0, rows);
        for (const auto& [n_begin, n_end] :
             {std::pair<int64_t, int64_t>{0, rows}, {5, 22}, {13, 14}, {16, rows}}) {
          if (n_end > rows) continue;
          expect_close(p, run(kernels_, p.packed.matrix(), p, n_begin, n_end), expected, n_begin, n_end,
                       describe(m, rows, cols, n_begin, n_end));
        }
      }
    }
  }
}

TEST_P(PackedKernels, Q8_0x16SplitsAgreeBitForBit) {
  constexpr int64_t kRows = 45;
  const PackProblem p = make_problem(17, kRows, 96, 5);
  const WeightMatrix& w = p.packed.matrix();
  const std::vector<float> whole = run(kernels_, w, p, 0, kRows);
  for (int64_t split = 1; split < kRows; ++split) {
    std::vector<float> pieces(whole.size(), kPackCanary);
    matmul_with(kernels_, w, p.act.data(), p.m, pieces.data(), kRows, 0, split);
    matmul_with(kernels_, w, p.act.data(), p.m, pieces.data(), kRows, split, kRows);
    EXPECT_EQ(std::memcmp(pieces.data(), whole.data(), whole.size() * sizeof(float)), 0)
        << "split at " << split;
  }
}

TEST_P(PackedKernels, Q8_0x16RowsAreTheSameAloneOrInABatch) {
  // Batch invariance: an activation row's outputs do not depend on which row
  // tile it lands in, nor on the other rows.
  constexpr int64_t kRows = 37, kCols = 160, kM = 11;
  const PackProblem p = make_problem(kM, kRows, kCols, 21);
  const std::vector<float> batch = run(kernels_, p.packed.matrix(), p, 0, kRows);
  const size_t act_row = activation_row_bytes(GgmlType::kQ8_0, kCols);
  for (int64_t i = 0; i < kM; ++i) {
    std::vector<float> alone(kRows, kPackCanary);
    matmul_with(kernels_, p.packed.matrix(), p.act.data() + static_cast<size_t>(i) * act_row, 1, alone.data(),
                kRows, 0, kRows);
    EXPECT_EQ(std::memcmp(alone.data(), batch.data() + i * kRows, kRows * sizeof(float)), 0) << "row " << i;
  }
}

TEST_P(PackedKernels, Q8_0x16LongRowsStayWithinTolerance) {
  for (const int64_t cols : {4096, 11008}) {
    const PackProblem p = make_problem(3, 32, cols, 99);
    expect_close(p, run(kernels_, p.packed.matrix(), p, 0, 32), run(reference_, p.rows.w, p, 0, 32), 0, 32,
                 describe(3, 32, cols, 0, 32));
  }
}

TEST_P(PackedKernels, Q8_0x16ManyActivationRowsAreSplitIntoCacheSizedCalls) {
  // 300 rows of 4096 activations exceed one cache block (matmul.cc).
  const PackProblem p = make_problem(300, 16, 4096, 4);
  expect_close(p, run(kernels_, p.packed.matrix(), p, 0, 16), run(reference_, p.rows.w, p, 0, 16), 0, 16,
               "m=300");
}

TEST(PackedWeights, PublicMatmulRunsThePreferredLayout) {
  const WeightLayout layout = preferred_layout(GgmlType::kQ8_0);
  if (layout == WeightLayout::kRows) GTEST_SKIP() << "no packed Q8_0 kernel selected on this CPU";
  const PackProblem p = make_problem(3, 37, 160, 8);
  std::vector<float> y(static_cast<size_t>(3 * 37), kPackCanary);
  matmul(p.packed.matrix(), p.act.data(), 3, y.data(), 37, 0, 37);
  expect_close(p, y, run(matmul_kernels_for_isa(GgmlType::kQ8_0, Isa::kScalar), p.rows.w, p, 0, 37), 0, 37,
               "selected");
}

INSTANTIATE_TEST_SUITE_P(Tiers, PackedKernels, ::testing::Values(Isa::kAvx2, Isa::kAvx512, Isa::kAmx),
                         [](const ::testing::TestParamInfo<Isa>& tier) {
                           return std::string(isa_name(tier.param));
                         });

}  // namespace
}  // namespace met::cpu
