// Tests for matmul.h and its kernels: the scalar reference equals the product
// of the dequantized weights and activations (so its integer formulas are
// right), and every ISA tier the CPU has matches the reference on random
// data over many shapes: m = 1, 2, 3, 7, 16, 17, 64; cols of 1..k blocks
// (odd counts included); odd output ranges; splits of [n_begin, n_end).
// Tolerances, relative to sum_k |w_k a_k| of the output (the largest errors
// seen on this data are in brackets):
//   integer paths (Q8_0, Q4_0, Q5_0, Q4_1, Q5_1, MXFP4, IQ4_NL, Q2_K..Q6_K, IQ4_XS): 4e-6 [Q8_0/Q4_0 2e-7, K-quants
//     1.2e-6]. Kernel and reference see the same quantized activations and
//     compute exact integer dots; only the float scaling (<= 3 roundings per
//     block) and the f32 summation of the block terms differ from the
//     reference's double sum. The K-quants' unsigned codes (Q6_K's +32
//     offset, Q4_K's mins) make the int lanes cancel, hence their larger
//     share. A single wrong element of a 4096-long row is ~2.4e-4.
//   float paths (F32, F16, BF16): 5e-6 [3.2e-7]. f32 lanes accumulate up to
//     cols/8 products each; the error grows like the square root of that in
//     practice (linearly in the worst case), and the reference sums in
//     double. vdpbf16ps treats subnormals as zero; the data here has none.
// Each output is computed the same way whatever tile covers it, so splits
// of the column range must agree bit for bit with one call.
#include "backend/cpu/kernels/matmul.h"

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
#include "tensor/reference/reference_kernels.h"
#include "tensor/tensor_testing.h"
#include "testing/random_data.h"

namespace met::cpu {
namespace {

constexpr GgmlType kTypes[] = {GgmlType::kF32,  GgmlType::kF16,  GgmlType::kBF16, GgmlType::kQ8_0,
                               GgmlType::kQ4_0, GgmlType::kMXFP4, GgmlType::kQ4_K, GgmlType::kQ5_K,
                               GgmlType::kQ6_K, GgmlType::kIQ4_NL, GgmlType::kIQ4_XS,
                               GgmlType::kQ5_0, GgmlType::kQ4_1, GgmlType::kQ5_1, GgmlType::kQ2_K,
                               GgmlType::kQ3_K};
constexpr int64_t kRowCounts[] = {1, 2, 3, 7, 16, 17, 64};

bool is_float_type(GgmlType type) {
  return type == GgmlType::kF32 || type == GgmlType::kF16 || type == GgmlType::kBF16;
}

// Bounds on |fast - reference| / sum|w a|: float accumulation over these
// rows. A type whose blocks carry a minimum (w = d q - m, or + m) is summed
// as two terms, the codes' and the minimum's, each of which can be several
// times sum|w a| where they cancel, and their rounding is relative to them:
// Q2_K's, with 2-bit codes, reached 4.1e-6 on one draw. Any decoding error
// (a wrong scale, code or block) is orders of magnitude above these.
double tolerance(GgmlType type) {
  if (is_float_type(type)) return 5e-6;
  const bool has_min = type == GgmlType::kQ2_K || type == GgmlType::kQ4_K || type == GgmlType::kQ5_K ||
                       type == GgmlType::kQ4_1 || type == GgmlType::kQ5_1;
  return has_min ? 1.6e-5 : 4e-6;
}

// Row lengths per type: odd element counts for float types, odd block counts
// (1, 3, 5 blocks ...) for block types.
std::vector<int64_t> col_counts(GgmlType type) {
  if (is_float_type(type)) return {1, 7, 16, 33, 100, 256, 1000};
  const int64_t block = ggml_type_traits(type).block_size;
  if (block == 32) return {32, 64, 96, 160, 512, 1056};
  return {256, 512, 768, 1280};
}

struct Weights {
  GgmlType type;
  int64_t rows = 0;
  int64_t cols = 0;
  size_t row_bytes = 0;
  std::vector<uint8_t> bytes;
  WeightMatrix view() const { return {type, bytes.data(), rows, cols, row_bytes}; }
};

// Random rows of varied scale, quantized to `type` by src/tensor.
Weights random_weights(GgmlType type, int64_t rows, int64_t cols, uint32_t seed) {
  Weights w{type, rows, cols, static_cast<size_t>(*ggml_row_bytes(type, cols)), {}};
  w.bytes.resize(w.row_bytes * static_cast<size_t>(rows));
  std::mt19937 rng(seed);
  met::testing::UniformFloat log_scale(-4.0f, 1.0f);
  for (int64_t n = 0; n < rows; ++n) {
    std::vector<float> x = testing::gaussian_with_outliers(static_cast<size_t>(cols), seed * 131 + static_cast<uint32_t>(n),
                                    std::exp(log_scale(rng)));
    std::span<uint8_t> dst(w.bytes.data() + static_cast<size_t>(n) * w.row_bytes, w.row_bytes);
    EXPECT_TRUE(quantize_row(type, x, dst).ok());
  }
  return w;
}

std::vector<float> dequantized_weight_row(const Weights& w, int64_t n) {
  std::vector<float> out(static_cast<size_t>(w.cols));
  std::span<const uint8_t> src(w.bytes.data() + static_cast<size_t>(n) * w.row_bytes, w.row_bytes);
  EXPECT_TRUE(dequantize_row(w.type, src, out).ok());
  return out;
}

// The values a prepared activation row stands for.
std::vector<float> dequantized_activation_row(GgmlType type, const uint8_t* row, int64_t cols) {
  std::vector<float> out(static_cast<size_t>(cols));
  if (type == GgmlType::kF32 || type == GgmlType::kF16) {
    std::memcpy(out.data(), row, out.size() * sizeof(float));
  } else if (type == GgmlType::kBF16) {
    met::ref::dequantize_row_bf16(row, out.data(), cols);
  } else if (type == GgmlType::kQ8_0 || type == GgmlType::kQ4_0 || type == GgmlType::kMXFP4 ||
             type == GgmlType::kIQ4_NL || type == GgmlType::kQ5_0 || type == GgmlType::kQ4_1 ||
             type == GgmlType::kQ5_1) {
    met::ref::dequantize_row_q8_0(row, out.data(), cols);
  } else {
    met::ref::dequantize_row_q8_k(row, out.data(), cols);
  }
  return out;
}

struct Problem {
  Weights w;
  int64_t m = 0;
  std::vector<float> x;
  std::vector<uint8_t> act;  // prepared by the reference
};

Problem make_problem(GgmlType type, int64_t m, int64_t rows, int64_t cols, uint32_t seed) {
  Problem p{random_weights(type, rows, cols, seed), m,
            testing::gaussian_with_outliers(static_cast<size_t>(m * cols), seed + 7), {}};
  p.act.resize(static_cast<size_t>(m) * activation_row_bytes(type, cols));
  prepare_activations_with(matmul_kernels_for_isa(type, Isa::kScalar), type, p.x.data(), cols, cols,
                           0, m, p.act.data());
  return p;
}

const uint8_t* act_row(const Problem& p, int64_t i) {
  return p.act.data() + static_cast<size_t>(i) * activation_row_bytes(p.w.type, p.w.cols);
}

// sum_k |w_k a_k| for every output: the scale errors are measured against.
std::vector<double> magnitudes(const Problem& p) {
  std::vector<double> out(static_cast<size_t>(p.m * p.w.rows));
  for (int64_t n = 0; n < p.w.rows; ++n) {
    const std::vector<float> w = dequantized_weight_row(p.w, n);
    for (int64_t i = 0; i < p.m; ++i) {
      const std::vector<float> a = dequantized_activation_row(p.w.type, act_row(p, i), p.w.cols);
      double sum = 0.0;
      for (size_t k = 0; k < w.size(); ++k) sum += std::fabs(static_cast<double>(w[k]) * a[k]);
      out[static_cast<size_t>(i * p.w.rows + n)] = sum;
    }
  }
  return out;
}

constexpr float kCanary = -12345.0f;

// Runs `kernels` over outputs [n_begin, n_end); y is m x rows, canaries elsewhere.
std::vector<float> run(const MatmulKernels& kernels, const Problem& p, int64_t n_begin, int64_t n_end) {
  std::vector<float> y(static_cast<size_t>(p.m * p.w.rows), kCanary);
  matmul_with(kernels, p.w.view(), p.act.data(), p.m, y.data(), p.w.rows, n_begin, n_end);
  return y;
}

std::string describe(GgmlType type, int64_t m, int64_t cols, int64_t n_begin, int64_t n_end) {
  return std::string(ggml_type_name(type)) + " m=" + std::to_string(m) + " cols=" +
         std::to_string(cols) + " n=[" + std::to_string(n_begin) + "," + std::to_string(n_end) + ")";
}

// Outputs in range within tolerance of the reference, canaries elsewhere.
void expect_close(const Problem& p, const std::vector<float>& actual, const std::vector<float>& expected,
                  const std::vector<double>& magnitude, int64_t n_begin, int64_t n_end,
                  const std::string& what) {
  int64_t failures = 0;
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t n = 0; n < p.w.rows; ++n) {
      const auto idx = static_cast<size_t>(i * p.w.rows + n);
      if (n < n_begin || n >= n_end) {
        if (actual[idx] != kCanary && ++failures < 5) ADD_FAILURE() << what << " wrote y[" << i << "][" << n << "]";
        continue;
      }
      const double error = std::fabs(static_cast<double>(actual[idx]) - expected[idx]);
      const double bound = tolerance(p.w.type) * magnitude[idx] + 1e-30;
      if (!(error <= bound) && ++failures < 5) {
        ADD_FAILURE() << what << " y[" << i << "][" << n << "] = " << actual[idx] << ", reference "
                      << expected[idx] << ", error " << error / (magnitude[idx] + 1e-300)
                      << " of sum|w a|";
      }
    }
  }
  EXPECT_EQ(failures, 0) << what;
}

TEST(MatmulReference, EqualsTheProductOfDequantizedWeightsAndActivations) {
  for (const GgmlType type : kTypes) {
    for (const int64_t cols : col_counts(type)) {
      const Problem p = make_problem(type, 3, 9, cols, static_cast<uint32_t>(cols));
      const std::vector<float> y = run(matmul_kernels_for_isa(type, Isa::kScalar), p, 0, p.w.rows);
      const std::vector<double> magnitude = magnitudes(p);
      for (int64_t n = 0; n < p.w.rows; ++n) {
        const std::vector<float> w = dequantized_weight_row(p.w, n);
        for (int64_t i = 0; i < p.m; ++i) {
          const std::vector<float> a = dequantized_activation_row(type, act_row(p, i), cols);
          double exact = 0.0;
          for (size_t k = 0; k < w.size(); ++k) exact += static_cast<double>(w[k]) * a[k];
          const auto idx = static_cast<size_t>(i * p.w.rows + n);
          // Dequantizing rounds each element once; the reference scales exact
          // integer sums instead: both within a few ulps of sum |w a|.
          EXPECT_NEAR(y[idx], exact, 1e-6 * magnitude[idx] + 1e-30)
              << describe(type, p.m, cols, 0, p.w.rows) << " at " << i << "," << n;
        }
      }
    }
  }
}

TEST(MatmulReference, Q8_0ActivationsCarryTheirLaneSumsAndTails) {
  const int64_t cols = 96;
  const std::vector<float> x = testing::gaussian_with_outliers(cols, 3);
  std::vector<uint8_t> row(activation_row_bytes(GgmlType::kQ8_0, cols), 0xAB);
  prepare_activations_with(matmul_kernels_for_isa(GgmlType::kQ8_0, Isa::kScalar), GgmlType::kQ8_0,
                           x.data(), cols, cols, 0, 1, row.data());
  const auto* blocks = reinterpret_cast<const BlockQ8_0*>(row.data());
  for (int b = 0; b < 3; ++b) {
    for (int lane = 0; lane < 8; ++lane) {
      int sum = 0;
      for (int j = 4 * lane; j < 4 * lane + 4; ++j) sum += blocks[b].qs[j];
      int16_t stored;
      std::memcpy(&stored, row.data() + 3 * sizeof(BlockQ8_0) + 2 * (8 * b + lane), 2);
      EXPECT_EQ(stored, sum) << b << " " << lane;
    }
    int block_sum = 0;
    for (int j = 0; j < kQk; ++j) block_sum += blocks[b].qs[j];
    ActQ8_0Tail tail;
    std::memcpy(&tail, row.data() + 3 * (sizeof(BlockQ8_0) + 16) + sizeof(ActQ8_0Tail) * b, sizeof(tail));
    EXPECT_EQ(tail.offset_bias, -128 * block_sum) << b;
    EXPECT_EQ(tail.d, fp16_to_f32(blocks[b].d)) << b;
  }
  const size_t content = 3 * (sizeof(BlockQ8_0) + 16 + sizeof(ActQ8_0Tail));
  for (size_t i = content; i < row.size(); ++i) EXPECT_EQ(row[i], 0) << "padding byte " << i;
}

TEST(Matmul, SupportsItsWeightTypesOnWholeBlocks) {
  for (const GgmlType type : kTypes) {
    const int64_t block = ggml_type_traits(type).block_size;
    EXPECT_TRUE(matmul_supports(type, 4 * block * 32)) << ggml_type_name(type);
    if (block > 1) {
      EXPECT_FALSE(matmul_supports(type, block + 1)) << ggml_type_name(type);
    }
    EXPECT_EQ(activation_row_bytes(type, block * 3) % 64, 0u) << ggml_type_name(type);
    EXPECT_EQ(matmul_column_tile(type) % 4, 0);
  }
  EXPECT_FALSE(matmul_supports(GgmlType::kIQ2_XXS, 256));
  EXPECT_FALSE(matmul_supports(GgmlType::kF32, 0));
}

// Guided claims of a weight stream read at least 64 KiB each at m <= 4 (a
// call's stream runs slow until it is long), whole column tiles always (one
// past 4 rows; two for the layouts whose kernels walk groups in pairs).
TEST(Matmul, ClaimTilesStreamAtLeast64KiBAtFewRowsAndOneTileAtMore) {
  const auto matrix = [](GgmlType type, int64_t cols) {
    WeightMatrix w;
    w.type = type;
    w.rows = 4096;
    w.cols = cols;
    w.row_bytes = *ggml_row_bytes(type, static_cast<size_t>(cols));
    return w;
  };
  for (const GgmlType type : {GgmlType::kMXFP4, GgmlType::kQ8_0, GgmlType::kF16, GgmlType::kQ4_K}) {
    for (const int64_t cols : {256, 1024, 4096, 16384}) {
      const WeightMatrix w = matrix(type, cols);
      const int64_t tile = matmul_column_tile(type);
      for (const int64_t m : {1, 2, 4}) {
        const int64_t claim = matmul_claim_tile(w, m);
        EXPECT_EQ(claim % tile, 0) << ggml_type_name(type) << " cols " << cols;
        EXPECT_GE(static_cast<size_t>(claim) * w.row_bytes, size_t{64} << 10) << ggml_type_name(type) << " " << cols;
        // No more tiles than it takes: one tile fewer reads under 64 KiB.
        EXPECT_LT(static_cast<size_t>(claim - tile) * w.row_bytes, size_t{64} << 10) << ggml_type_name(type);
      }
      EXPECT_EQ(matmul_claim_tile(w, 5), tile) << ggml_type_name(type);
      EXPECT_EQ(matmul_claim_tile(w, 512), tile) << ggml_type_name(type);
    }
  }
  // 1024 MXFP4 inputs: 544 bytes a row, 8704 a tile: 8 tiles.
  EXPECT_EQ(matmul_claim_tile(matrix(GgmlType::kMXFP4, 1024), 1), 128);
  // The packed F16, BF16, Q4_K and Q5_K layouts' AVX-512 kernels walk
  // groups in pairs past 4 rows (matmul_fx16_avx512.cc,
  // matmul_kx16_avx512.cc): claims of two tiles there.
  for (const auto& [type, layout] :
       {std::pair{GgmlType::kF16, WeightLayout::kF16x16}, std::pair{GgmlType::kBF16, WeightLayout::kBf16x16},
        std::pair{GgmlType::kQ4_K, WeightLayout::kQ4_Kx16}, std::pair{GgmlType::kQ5_K, WeightLayout::kQ5_Kx16}}) {
    WeightMatrix w = matrix(type, 4096);
    w.layout = layout;
    const int64_t tile = matmul_column_tile(type);
    EXPECT_EQ(matmul_claim_tile(w, 5), 2 * tile) << ggml_type_name(type);
    EXPECT_EQ(matmul_claim_tile(w, 512), 2 * tile) << ggml_type_name(type);
    if (type == GgmlType::kF16 || type == GgmlType::kBF16) {
      EXPECT_EQ(matmul_claim_tile(w, 1), tile) << ggml_type_name(type);  // one tile: 128 KiB
    }
  }
}

TEST(Matmul, PublicEntryPointsMatchTheReference) {
  for (const GgmlType type : kTypes) {
    const int64_t cols = col_counts(type)[2];
    Problem p = make_problem(type, 5, 21, cols, 11);
    // prepare_activations runs the selected (fast) quantizer: same bytes.
    std::vector<uint8_t> act(p.act.size());
    prepare_activations(type, p.x.data(), cols, cols, 0, 2, act.data());
    prepare_activations(type, p.x.data(), cols, cols, 2, 5, act.data());
    ASSERT_EQ(act, p.act) << ggml_type_name(type);
    std::vector<float> y(static_cast<size_t>(p.m * p.w.rows), kCanary);
    matmul(p.w.view(), act.data(), p.m, y.data(), p.w.rows, 0, p.w.rows);
    const std::vector<float> expected = run(matmul_kernels_for_isa(type, Isa::kScalar), p, 0, p.w.rows);
    expect_close(p, y, expected, magnitudes(p), 0, p.w.rows, describe(type, p.m, cols, 0, p.w.rows));
  }
}

class MatmulTiers : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!isa_supported(detect_cpu_features(), GetParam())) {
      GTEST_SKIP() << "this CPU lacks " << isa_name(GetParam()) << "; its kernels are not checked here";
    }
    if (matmul_kernels_for_isa(GgmlType::kF32, GetParam()).matmul == nullptr) {
      GTEST_SKIP() << isa_name(GetParam()) << " has no matmul kernels of its own yet";
    }
  }
  // The tier's kernels, falling back to the reference's prepare.
  MatmulKernels kernels(GgmlType type) const {
    MatmulKernels k = matmul_kernels_for_isa(type, GetParam());
    EXPECT_NE(k.matmul, nullptr) << ggml_type_name(type);
    if (k.prepare == nullptr) k.prepare = matmul_kernels_for_isa(type, Isa::kScalar).prepare;
    return k;
  }
};

TEST_P(MatmulTiers, PrepareMatchesTheReferenceBitForBit) {
  for (const GgmlType type : kTypes) {
    const MatmulKernels fast = matmul_kernels_for_isa(type, GetParam());
    if (fast.prepare == nullptr) continue;
    for (const int64_t cols : col_counts(type)) {
      std::vector<float> x = testing::gaussian_with_outliers(static_cast<size_t>(3 * cols), static_cast<uint32_t>(cols));
      // Rounding ties, zeros, NaN and inf in the third row.
      for (int64_t k = 0; k < cols; ++k) x[static_cast<size_t>(cols + k)] = static_cast<float>(k % 64) - 31.5f;
      x[static_cast<size_t>(cols)] = 127.0f;
      x[static_cast<size_t>(2 * cols)] = std::nanf("");
      if (cols > 1) x[static_cast<size_t>(2 * cols + 1)] = INFINITY;
      for (int64_t k = 2; k < cols && k < 40; ++k) x[static_cast<size_t>(2 * cols + k)] = 0.0f;
      const size_t row_bytes = activation_row_bytes(type, cols);
      std::vector<uint8_t> expected(3 * row_bytes), actual(3 * row_bytes);
      prepare_activations_with(matmul_kernels_for_isa(type, Isa::kScalar), type, x.data(), cols, cols,
                               0, 3, expected.data());
      prepare_activations_with(fast, type, x.data(), cols, cols, 0, 3, actual.data());
      EXPECT_EQ(actual, expected) << ggml_type_name(type) << " cols=" << cols;
    }
  }
}

TEST_P(MatmulTiers, MatchesTheReferenceOnManyShapes) {
  constexpr int64_t kOutputs = 37;
  for (const GgmlType type : kTypes) {
    const MatmulKernels fast = kernels(type);
    const MatmulKernels reference = matmul_kernels_for_isa(type, Isa::kScalar);
    for (const int64_t cols : col_counts(type)) {
      for (const int64_t m : kRowCounts) {
        const Problem p = make_problem(type, m, kOutputs, cols, static_cast<uint32_t>(m * 1000 + cols));
        const std::vector<double> magnitude = magnitudes(p);
        // A reference output does not depend on the range it was asked in.
        const std::vector<float> expected = run(reference, p, 0, kOutputs);
        for (const auto& [n_begin, n_end] : {std::pair<int64_t, int64_t>{0, kOutputs}, {5, 22}, {13, 14}}) {
          expect_close(p, run(fast, p, n_begin, n_end), expected, magnitude, n_begin, n_end,
                       describe(type, m, cols, n_begin, n_end) + " " + std::string(isa_name(GetParam())));
        }
      }
    }
  }
}

TEST_P(MatmulTiers, SplitsOfTheColumnRangeAgreeBitForBit) {
  constexpr int64_t kOutputs = 45;
  for (const GgmlType type : kTypes) {
    const MatmulKernels fast = kernels(type);
    const Problem p = make_problem(type, 17, kOutputs, col_counts(type)[1], 5);
    const std::vector<float> whole = run(fast, p, 0, kOutputs);
    for (const int64_t split : {1, 3, 16, 17, 30, 44}) {
      std::vector<float> pieces(whole.size(), kCanary);
      matmul_with(fast, p.w.view(), p.act.data(), p.m, pieces.data(), kOutputs, 0, split);
      matmul_with(fast, p.w.view(), p.act.data(), p.m, pieces.data(), kOutputs, split, kOutputs);
      EXPECT_EQ(std::memcmp(pieces.data(), whole.data(), whole.size() * sizeof(float)), 0)
          << ggml_type_name(type) << " split at " << split;
    }
  }
}

TEST_P(MatmulTiers, LongRowsStayWithinTolerance) {
  for (const GgmlType type : kTypes) {
    for (const int64_t cols : {4096, 11008}) {
      if (cols % ggml_type_traits(type).block_size != 0) continue;
      const Problem p = make_problem(type, 3, 8, cols, 99);
      expect_close(p, run(kernels(type), p, 0, 8),
                   run(matmul_kernels_for_isa(type, Isa::kScalar), p, 0, 8), magnitudes(p), 0, 8,
                   describe(type, 3, cols, 0, 8));
    }
  }
}

TEST_P(MatmulTiers, ManyActivationRowsAreSplitIntoCacheSizedCalls) {
  // 300 rows of 4096 Q8_0 activations exceed one cache block (matmul.cc).
  const Problem p = make_problem(GgmlType::kQ8_0, 300, 6, 4096, 4);
  expect_close(p, run(kernels(GgmlType::kQ8_0), p, 0, 6),
               run(matmul_kernels_for_isa(GgmlType::kQ8_0, Isa::kScalar), p, 0, 6), magnitudes(p), 0,
               6, "q8_0 m=300");
}

INSTANTIATE_TEST_SUITE_P(Tiers, MatmulTiers, ::testing::Values(Isa::kAvx2, Isa::kAvxVnni, Isa::kAvx512, Isa::kAmx),
                         [](const ::testing::TestParamInfo<Isa>& tier) {
                           return std::string(isa_name(tier.param));
                         });

}  // namespace
}  // namespace met::cpu
