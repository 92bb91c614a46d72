// Tests of the CUDA backend's kernels (gemv.h, and the shared per-element
// math through cuda_probe_kernels.h) on a
// GPU against the CPU references: weight rows decode to the reference's
// bits for every type, every fp16 pattern too; RoPE from the angle table
// rotates to the reference's bits; the GEMV (gemv.h), tiled and by groups,
// agrees with the reference matmul within float summation-order error for
// batches 1 to 8, each row's bits the same in every batch; the fold of
// attention partials agrees with the CPU's fold. Label gpu: each test skips, saying why, where no CUDA device
// is visible.
#include <gtest/gtest.h>

#include "cuda_probe_kernels.h"
#include "cuda_test_support.h"

#include <bit>
#include <cmath>
#include <utility>
#include <vector>

#include "backend/cpu/kernels/reference/kernels_ref.h"
#include "backend/cuda/cuda_buffer.h"
#include "backend/cuda/cuda_device.h"
#include "backend/cuda/gemv.h"
#include "backend/cuda/weight_tiling.h"
#include "backend/cuda/rope_hd.h"
#include "backend/cuda/rope_table.h"
#include "backend/softmax_fold.h"
#include "tensor/reference/reference_kernels.h"
#include "testing/random_data.h"

namespace met::cuda {
namespace {

#define MET_ASSERT_OK(expr)                        \
  do {                                             \
    const Status met_s_ = (expr);                  \
    ASSERT_TRUE(met_s_.ok()) << met_s_.to_string(); \
  } while (0)

struct TypeCase {
  const char* name;
  HdWeightType type;
  int64_t block_elements;
  int64_t block_bytes;
  void (*quantize)(const float*, uint8_t*, int64_t);
  void (*dequantize)(const uint8_t*, float*, int64_t);
};

const TypeCase kTypes[] = {
    {"F16", HdWeightType::kF16, 1, 2, ref::quantize_row_f16, ref::dequantize_row_f16},
    {"BF16", HdWeightType::kBF16, 1, 2, ref::quantize_row_bf16, ref::dequantize_row_bf16},
    {"Q8_0", HdWeightType::kQ8_0, kHdQk, kHdQ8_0Bytes, ref::quantize_row_q8_0, ref::dequantize_row_q8_0},
    {"Q4_K", HdWeightType::kQ4_K, kHdQkK, kHdQ4KBytes, ref::quantize_row_q4_k, ref::dequantize_row_q4_k},
    {"Q6_K", HdWeightType::kQ6_K, kHdQkK, kHdQ6KBytes, ref::quantize_row_q6_k, ref::dequantize_row_q6_k},
};

struct Weights {
  int64_t rows = 0, cols = 0, row_bytes = 0;
  std::vector<uint8_t> bytes;
  std::vector<float> decoded;  // by the CPU reference
};

Weights make_weights(const TypeCase& c, int64_t rows, int64_t cols, uint32_t seed) {
  Weights w{rows, cols, cols / c.block_elements * c.block_bytes, {}, {}};
  const std::vector<float> x = testing::gaussian(static_cast<size_t>(rows * cols), seed);
  w.bytes.resize(static_cast<size_t>(rows * w.row_bytes));
  w.decoded.resize(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r) {
    c.quantize(x.data() + r * cols, w.bytes.data() + r * w.row_bytes, cols);
    c.dequantize(w.bytes.data() + r * w.row_bytes, w.decoded.data() + r * cols, cols);
  }
  return w;
}

TEST(CudaKernels, WeightRowsDecodeToTheReferenceBits) {
  MET_REQUIRE_GPU();
  for (const TypeCase& c : kTypes) {
    const Weights w = make_weights(c, 7, 1024, 3);
    auto src = DeviceBuffer<uint8_t>::from(w.bytes);
    auto out = DeviceBuffer<float>::allocate(w.decoded.size());
    ASSERT_TRUE(src.ok() && out.ok());
    MET_ASSERT_OK(dequantize_rows(c.type, src->get(), w.rows, w.cols, w.row_bytes, out->get(), nullptr));
    std::vector<float> got(w.decoded.size());
    MET_ASSERT_OK(out->copy_to(got));
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(w.decoded[i])) << c.name << " element " << i;
    }
  }
}

// The device converts fp16 with its own instruction (the host test of the
// decoders runs tensor/half.h, the reference's own conversion): every one
// of the 65,536 patterns must give the reference's float, NaN for NaN.
TEST(CudaKernels, EveryF16BitPatternDecodesAsTheReference) {
  MET_REQUIRE_GPU();
  std::vector<uint8_t> row(2 * 65536);
  for (uint32_t h = 0; h < 65536; ++h) {
    row[2 * h] = static_cast<uint8_t>(h & 0xFF);
    row[2 * h + 1] = static_cast<uint8_t>(h >> 8);
  }
  std::vector<float> want(65536);
  ref::dequantize_row_f16(row.data(), want.data(), 65536);
  auto src = DeviceBuffer<uint8_t>::from(row);
  auto out = DeviceBuffer<float>::allocate(want.size());
  ASSERT_TRUE(src.ok() && out.ok());
  MET_ASSERT_OK(dequantize_rows(HdWeightType::kF16, src->get(), 1, 65536, 2 * 65536, out->get(), nullptr));
  std::vector<float> got(want.size());
  MET_ASSERT_OK(out->copy_to(got));
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      ASSERT_TRUE(std::isnan(got[i])) << "pattern " << i;
    } else {
      ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i])) << "pattern " << i;
    }
  }
}

TEST(CudaKernels, RopeFromTheTableIsTheReferenceRope) {
  MET_REQUIRE_GPU();
  cpu::RopeParams p;
  p.head_dim = 128;
  p.rope_dims = 128;
  p.freq_base = 1000000.0f;
  p.layout = cpu::RopeLayout::kNeox;
  const std::vector<float> table = rope_table(p, 5000);
  const std::vector<int32_t> positions = {0, 1, 31, 4095, 4999};
  constexpr int32_t kHeads = 8;
  const std::vector<float> x = testing::gaussian(positions.size() * kHeads * 128, 9);
  std::vector<float> want = x;
  for (size_t r = 0; r < positions.size(); ++r) cpu::ref::rope(want.data() + r * kHeads * 128, kHeads, positions[r], p);
  auto dx = DeviceBuffer<float>::from(x);
  auto dpos = DeviceBuffer<int32_t>::from(positions);
  auto dtable = DeviceBuffer<float>::from(table);
  ASSERT_TRUE(dx.ok() && dpos.ok() && dtable.ok());
  MET_ASSERT_OK(rope_rows(dx->get(), static_cast<int32_t>(positions.size()), kHeads * 128, kHeads, 128, 128, true,
                          dpos->get(), dtable->get(), nullptr));
  std::vector<float> got(x.size());
  MET_ASSERT_OK(dx->copy_to(got));
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i])) << i;
}

// y = W x on the device for `batch` rows of x.
std::vector<float> device_gemv(HdWeightType type, const std::vector<uint8_t>& bytes, int64_t row_bytes,
                               const Weights& w, const std::vector<float>& x, int32_t batch, bool& tiled) {
  auto dw = DeviceBuffer<uint8_t>::from(bytes);
  auto dx = DeviceBuffer<float>::from(x);
  auto dy = DeviceBuffer<float>::allocate(static_cast<size_t>(batch * w.rows));
  EXPECT_TRUE(dw.ok() && dx.ok() && dy.ok());
  if (!dw.ok() || !dx.ok() || !dy.ok()) return {};
  tiled = gemv_is_tiled(type, dw->get(), w.cols, row_bytes, dx->get());
  const Status s = gemv(type, dw->get(), w.rows, w.cols, row_bytes, dx->get(), batch, dy->get(), nullptr);
  EXPECT_TRUE(s.ok()) << s.to_string();
  std::vector<float> got(static_cast<size_t>(batch * w.rows));
  EXPECT_TRUE(dy->copy_to(got).ok());
  return got;
}

// Every type on both paths (2048 columns fill warp tiles, Q8_0 and the
// K-quants once tiled; 2080 do not), with few rows (each split over a
// block's warps) and many (not split), batches 1 to 8: within float
// summation error of the double-precision product (every row of the small
// matrix, every 41st of the large), and a row's outputs the same bits
// whatever the batch (batch invariance).
TEST(CudaKernels, GemvAgreesWithTheReferenceMatmulOnBothPaths) {
  MET_REQUIRE_GPU();
  for (const TypeCase& c : kTypes) {
    for (const auto& [rows, cols] : {std::pair<int64_t, int64_t>{301, 2048}, {301, 2080}, {8203, 2048}}) {
      if (cols % c.block_elements != 0) continue;
      const Weights w = make_weights(c, rows, cols, 5);  // odd: a warp's rows past the end
      const int64_t row_step = rows > 1000 ? 41 : 1;
      std::vector<uint8_t> bytes = w.bytes;
      int64_t row_bytes = w.row_bytes;
      HdWeightType type = c.type;
      if (c.type == HdWeightType::kQ8_0 && can_tile_q8_0(cols)) {
        type = HdWeightType::kQ8_0Tiled;
        tile_q8_0_rows(w.bytes, cols, bytes);
      } else if (c.type == HdWeightType::kQ4_K && can_tile_k_quant(cols)) {
        type = HdWeightType::kQ4_KTiled;
        row_bytes = q4_k_tiled_row_bytes(cols);
        bytes.resize(static_cast<size_t>(rows * row_bytes));
        tile_q4_k_rows(w.bytes, cols, bytes);
      } else if (c.type == HdWeightType::kQ6_K && can_tile_k_quant(cols)) {
        type = HdWeightType::kQ6_KTiled;
        row_bytes = q6_k_tiled_row_bytes(cols);
        bytes.resize(static_cast<size_t>(rows * row_bytes));
        tile_q6_k_rows(w.bytes, cols, bytes);
      }
      const bool want_tiled = cols == 2048;
      const std::vector<float> x = testing::gaussian(static_cast<size_t>(kMaxGemvBatch * cols), 6);
      std::vector<float> alone;
      for (int32_t batch = 1; batch <= kMaxGemvBatch; ++batch) {
        bool tiled = false;
        const std::vector<float> got = device_gemv(type, bytes, row_bytes, w, x, batch, tiled);
        ASSERT_EQ(got.size(), static_cast<size_t>(batch * w.rows));
        EXPECT_EQ(tiled, want_tiled) << c.name << " " << cols << " columns";
        if (batch == 1) alone = got;
        for (int64_t j = 0; j < w.rows; ++j) {
          ASSERT_EQ(std::bit_cast<uint32_t>(got[static_cast<size_t>(j)]),
                    std::bit_cast<uint32_t>(alone[static_cast<size_t>(j)]))
              << c.name << " batch " << batch << " row " << j << ": not the bits of batch 1";
        }
        if (batch != 1 && batch != kMaxGemvBatch) continue;
        for (int32_t b = 0; b < batch; ++b) {
          for (int64_t j = 0; j < w.rows; j += row_step) {
            double want = 0.0, magnitude = 0.0;
            for (int64_t k = 0; k < cols; ++k) {
              const double term = double{w.decoded[static_cast<size_t>(j * cols + k)]} * x[static_cast<size_t>(b * cols + k)];
              want += term;
              magnitude += std::abs(term);
            }
            ASSERT_NEAR(got[static_cast<size_t>(b * w.rows + j)], want, 1e-5 * magnitude + 1e-6)
                << c.name << " " << cols << " columns, batch " << batch << " row " << j;
          }
        }
      }
    }
  }
}

TEST(CudaKernels, FoldingPartialsMatchesTheSharedFold) {
  MET_REQUIRE_GPU();
  constexpr int32_t kPartitions = 5, kQueries = 12, kDim = 64, kRecord = 2 + kDim;
  std::vector<float> partials = testing::gaussian(size_t{kPartitions} * kQueries * kRecord, 2);
  for (int32_t i = 0; i < kPartitions * kQueries; ++i) partials[static_cast<size_t>(i * kRecord + 1)] = 1.0f + std::abs(partials[static_cast<size_t>(i * kRecord + 1)]);
  std::vector<float> want(size_t{kQueries} * kDim);
  for (int32_t q = 0; q < kQueries; ++q) {
    std::vector<float> total(partials.begin() + q * kRecord, partials.begin() + (q + 1) * kRecord);
    for (int32_t p = 1; p < kPartitions; ++p) {
      const float* part = partials.data() + (p * kQueries + q) * kRecord;
      const FoldWeights w = fold_weights(total[0], part[0]);
      total[0] = w.m;
      total[1] = fold_term(total[1], part[1], w);
      for (int32_t d = 0; d < kDim; ++d) total[static_cast<size_t>(2 + d)] = fold_term(total[static_cast<size_t>(2 + d)], part[2 + d], w);
    }
    for (int32_t d = 0; d < kDim; ++d) want[static_cast<size_t>(q * kDim + d)] = total[static_cast<size_t>(2 + d)] / total[1];
  }
  auto dp = DeviceBuffer<float>::from(partials);
  auto dout = DeviceBuffer<float>::allocate(want.size());
  ASSERT_TRUE(dp.ok() && dout.ok());
  MET_ASSERT_OK(fold_partials(dp->get(), kPartitions, kQueries, kDim, dout->get(), nullptr));
  std::vector<float> got(want.size());
  MET_ASSERT_OK(dout->copy_to(got));
  // The device's expf may differ from the host's by an ulp or two.
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-5f * (1.0f + std::abs(want[i]))) << i;
}

}  // namespace
}  // namespace met::cuda
