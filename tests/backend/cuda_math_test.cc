// Host tests of the CUDA backend's per-element math (compiled by the host
// compiler from the same headers nvcc compiles): each weight type's element
// decoder gives the CPU scalar reference's float for every element of real
// (quantized) and arbitrary (random-byte) blocks; the pair rotation and the
// angle table give the reference's rope bit for bit; the softmax fold of
// partitions in order equals attention over the whole computed in double;
// Q8_0 rows tiled for the GEMV decode, element by element and group by
// group, to the file's bits; KV rows are stored as the CPU cache stores
// them.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <vector>

#include "backend/cpu/kernels/reference/kernels_ref.h"
#include "backend/cuda/dequant_hd.h"
#include "backend/cuda/forward_ops.h"
#include "backend/cuda/rope_hd.h"
#include "backend/cuda/rope_table.h"
#include "backend/cuda/weight_tiling.h"
#include "backend/softmax_fold.h"
#include "tensor/half.h"
#include "tensor/reference/reference_kernels.h"
#include "testing/random_data.h"

namespace met::cuda {
namespace {

using DequantRow = void (*)(const uint8_t*, float*, int64_t);

struct TypeCase {
  const char* name;
  HdWeightType type;
  int block_elements;
  int block_bytes;
  std::vector<int> fp16_offsets;  // within a block: the scales to keep finite
  DequantRow reference;
  void (*quantize)(const float*, uint8_t*, int64_t);
};

std::vector<TypeCase> type_cases() {
  return {
      {"F16", HdWeightType::kF16, 1, 2, {0}, ref::dequantize_row_f16, ref::quantize_row_f16},
      {"BF16", HdWeightType::kBF16, 1, 2, {}, ref::dequantize_row_bf16, ref::quantize_row_bf16},
      {"Q8_0", HdWeightType::kQ8_0, kHdQk, kHdQ8_0Bytes, {0}, ref::dequantize_row_q8_0, ref::quantize_row_q8_0},
      {"Q4_K", HdWeightType::kQ4_K, kHdQkK, kHdQ4KBytes, {0, 2}, ref::dequantize_row_q4_k, ref::quantize_row_q4_k},
      {"Q6_K", HdWeightType::kQ6_K, kHdQkK, kHdQ6KBytes, {208}, ref::dequantize_row_q6_k, ref::quantize_row_q6_k},
  };
}

// Element by element against the reference row decoder, comparing bits (a
// NaN from random bytes matches a NaN).
void expect_elements_match(const TypeCase& c, const std::vector<uint8_t>& row, int64_t n) {
  std::vector<float> expected(static_cast<size_t>(n));
  c.reference(row.data(), expected.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    const float got = weight_element(c.type, row.data(), i);
    const float want = expected[static_cast<size_t>(i)];
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << c.name << " element " << i;
    } else {
      ASSERT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(want))
          << c.name << " element " << i << ": " << got << " vs " << want;
    }
  }
}

TEST(CudaMath, EveryElementOfQuantizedRowsDecodesAsTheReference) {
  for (const TypeCase& c : type_cases()) {
    const int64_t n = 4 * kHdQkK;
    const std::vector<float> x = testing::gaussian_with_outliers(static_cast<size_t>(n), 7);
    std::vector<uint8_t> row(static_cast<size_t>(n / c.block_elements * c.block_bytes));
    c.quantize(x.data(), row.data(), n);
    expect_elements_match(c, row, n);
  }
}

TEST(CudaMath, EveryElementOfRandomBlocksDecodesAsTheReference) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> byte(0, 255);
  for (const TypeCase& c : type_cases()) {
    const int64_t n = 8 * kHdQkK;
    std::vector<uint8_t> row(static_cast<size_t>(n / c.block_elements * c.block_bytes));
    for (uint8_t& b : row) b = static_cast<uint8_t>(byte(rng));
    // Every scale bit pattern but the fp16 scales, which stay finite.
    met::testing::NormalFloat scale(0.0f, 0.05f);
    for (size_t block = 0; block < row.size() / static_cast<size_t>(c.block_bytes); ++block) {
      for (const int offset : c.fp16_offsets) {
        if (c.block_elements == 1) continue;  // F16's own values: NaN and inf included
        const uint16_t bits = f32_to_fp16(scale(rng));
        std::memcpy(row.data() + block * static_cast<size_t>(c.block_bytes) + offset, &bits, 2);
      }
    }
    expect_elements_match(c, row, n);
  }
}

TEST(CudaMath, TiledQ8_0RowsDecodeToTheFilesBits) {
  EXPECT_TRUE(can_tile_q8_0(512));
  EXPECT_TRUE(can_tile_q8_0(14336));
  EXPECT_FALSE(can_tile_q8_0(256));
  EXPECT_FALSE(can_tile_q8_0(768));
  EXPECT_FALSE(can_tile_q8_0(0));
  constexpr int64_t kRows = 3, kCols = 1024;
  const int64_t row_bytes = kCols / kHdQk * kHdQ8_0Bytes;
  const std::vector<float> w = testing::gaussian_with_outliers(static_cast<size_t>(kRows * kCols), 31);
  const std::vector<float> x = testing::gaussian(static_cast<size_t>(kCols), 32);
  std::vector<uint8_t> raw(static_cast<size_t>(kRows * row_bytes));
  for (int64_t r = 0; r < kRows; ++r) ref::quantize_row_q8_0(w.data() + r * kCols, raw.data() + r * row_bytes, kCols);
  std::vector<uint8_t> tiled(raw.size());
  tile_q8_0_rows(raw, kCols, tiled);
  EXPECT_NE(tiled, raw);
  for (int64_t r = 0; r < kRows; ++r) {
    const uint8_t* file_row = raw.data() + r * row_bytes;
    const uint8_t* tiled_row = tiled.data() + r * row_bytes;
    for (int64_t i = 0; i < kCols; ++i) {
      ASSERT_EQ(std::bit_cast<uint32_t>(weight_element(HdWeightType::kQ8_0Tiled, tiled_row, i)),
                std::bit_cast<uint32_t>(q8_0_element(file_row, i)))
          << "row " << r << " element " << i;
    }
    for (int64_t g = 0; g < kCols / kHdGroup; ++g) {
      ASSERT_EQ(std::bit_cast<uint32_t>(dot_group(HdWeightType::kQ8_0Tiled, tiled_row, g, x.data() + g * kHdGroup)),
                std::bit_cast<uint32_t>(dot_group(HdWeightType::kQ8_0, file_row, g, x.data() + g * kHdGroup)))
          << "row " << r << " group " << g;
    }
  }
}

// Tiled K-quant rows (quantized, and random bytes with finite scales)
// decode element by element to the file's bits.
struct KTileCase {
  const char* name;
  HdWeightType tiled;
  int block_bytes;
  std::vector<int> fp16_offsets;
  void (*quantize)(const float*, uint8_t*, int64_t);
  float (*file_element)(const uint8_t*, int64_t);
  void (*tile)(std::span<const uint8_t>, int64_t, std::span<uint8_t>);
};

TEST(CudaMath, TiledKQuantRowsDecodeToTheFilesBits) {
  EXPECT_TRUE(can_tile_k_quant(1024));
  EXPECT_TRUE(can_tile_k_quant(14336));
  EXPECT_FALSE(can_tile_k_quant(11008));
  EXPECT_FALSE(can_tile_k_quant(0));
  EXPECT_EQ(q4_k_tiled_row_bytes(4096), 4 * 592);
  EXPECT_EQ(q6_k_tiled_row_bytes(4096), 4 * 848);
  const KTileCase cases[] = {
      {"Q4_K", HdWeightType::kQ4_KTiled, kHdQ4KBytes, {0, 2}, ref::quantize_row_q4_k, q4_k_element, tile_q4_k_rows},
      {"Q6_K", HdWeightType::kQ6_KTiled, kHdQ6KBytes, {208}, ref::quantize_row_q6_k, q6_k_element, tile_q6_k_rows},
  };
  constexpr int64_t kRows = 3, kCols = 2048;
  std::mt19937 rng(41);
  std::uniform_int_distribution<int> byte(0, 255);
  met::testing::NormalFloat scale(0.0f, 0.05f);
  for (const KTileCase& c : cases) {
    const int64_t row_bytes = kCols / kHdQkK * c.block_bytes;
    const int64_t tiled_bytes =
        c.tiled == HdWeightType::kQ4_KTiled ? q4_k_tiled_row_bytes(kCols) : q6_k_tiled_row_bytes(kCols);
    for (const bool random_bytes : {false, true}) {
      std::vector<uint8_t> raw(static_cast<size_t>(kRows * row_bytes));
      if (random_bytes) {
        for (uint8_t& b : raw) b = static_cast<uint8_t>(byte(rng));
        for (size_t block = 0; block < raw.size() / static_cast<size_t>(c.block_bytes); ++block) {
          for (const int offset : c.fp16_offsets) {
            const uint16_t bits = f32_to_fp16(scale(rng));
            std::memcpy(raw.data() + block * static_cast<size_t>(c.block_bytes) + offset, &bits, 2);
          }
        }
      } else {
        const std::vector<float> w = testing::gaussian_with_outliers(static_cast<size_t>(kRows * kCols), 42);
        for (int64_t r = 0; r < kRows; ++r) c.quantize(w.data() + r * kCols, raw.data() + r * row_bytes, kCols);
      }
      std::vector<uint8_t> tiled(static_cast<size_t>(kRows * tiled_bytes));
      c.tile(raw, kCols, tiled);
      for (int64_t r = 0; r < kRows; ++r) {
        for (int64_t i = 0; i < kCols; ++i) {
          ASSERT_EQ(std::bit_cast<uint32_t>(weight_element(c.tiled, tiled.data() + r * tiled_bytes, i)),
                    std::bit_cast<uint32_t>(c.file_element(raw.data() + r * row_bytes, i)))
              << c.name << (random_bytes ? " random bytes" : " quantized") << " row " << r << " element " << i;
        }
      }
    }
  }
}

// A KV row stored by the grid program is, for F16 and Q8_0, the bytes the
// CPU's reference quantizer writes for the same floats (ties, zeros, NaN
// and outliers included), and each element reads back as the reference
// decodes it.
TEST(CudaMath, KvRowsAreStoredAsTheCpuCacheStoresThem) {
  constexpr int32_t kDim = 128;
  std::vector<float> x = testing::gaussian_with_outliers(kDim, 51);
  for (int j = 0; j < 32; ++j) x[32 + j] = 0.0f;          // an all-zero block
  x[64] = 127.0f, x[65] = 0.5f, x[66] = -63.5f;           // codes on a tie
  x[100] = std::numeric_limits<float>::quiet_NaN();       // skipped by the max, clamps to -127
  struct Case {
    HdKvType type;
    void (*quantize)(const float*, uint8_t*, int64_t);
    void (*dequantize)(const uint8_t*, float*, int64_t);
    int64_t bytes;
  };
  for (const Case& c : {Case{HdKvType::kF16, ref::quantize_row_f16, ref::dequantize_row_f16, 2 * kDim},
                        Case{HdKvType::kQ8_0, ref::quantize_row_q8_0, ref::dequantize_row_q8_0,
                             kDim / kHdQk * kHdQ8_0Bytes}}) {
    std::vector<uint8_t> want(static_cast<size_t>(c.bytes)), got(static_cast<size_t>(c.bytes));
    c.quantize(x.data(), want.data(), kDim);
    KvView kv;
    kv.type = c.type;
    kv.store_row(got.data(), x.data(), kDim);
    EXPECT_EQ(got, want) << static_cast<int>(c.type);
    std::vector<float> decoded(kDim);
    c.dequantize(want.data(), decoded.data(), kDim);
    for (int32_t d = 0; d < kDim; ++d) {
      const float back = kv.load(got.data(), d);
      if (std::isnan(decoded[static_cast<size_t>(d)])) {
        EXPECT_TRUE(std::isnan(back)) << d;
      } else {
        EXPECT_EQ(std::bit_cast<uint32_t>(back), std::bit_cast<uint32_t>(decoded[static_cast<size_t>(d)])) << d;
      }
    }
  }
}

TEST(CudaMath, AGroupsDotIsTheElementsFmaChain) {
  for (const TypeCase& c : type_cases()) {
    const int64_t n = 4 * kHdQkK;
    const std::vector<float> w = testing::gaussian_with_outliers(static_cast<size_t>(n), 21);
    const std::vector<float> x = testing::gaussian(static_cast<size_t>(n), 22);
    std::vector<uint8_t> row(static_cast<size_t>(n / c.block_elements * c.block_bytes));
    c.quantize(w.data(), row.data(), n);
    for (int64_t g = 0; g < n / kHdGroup; ++g) {
      float want = 0.0f;
      for (int j = 0; j < kHdGroup; ++j) {
        want = std::fma(weight_element(c.type, row.data(), g * kHdGroup + j), x[static_cast<size_t>(g * kHdGroup + j)], want);
      }
      const float got = dot_group(c.type, row.data(), g, x.data() + g * kHdGroup);
      ASSERT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(want)) << c.name << " group " << g;
    }
  }
}

cpu::RopeParams rope_params(cpu::RopeLayout layout, bool yarn) {
  cpu::RopeParams p;
  p.head_dim = 64;
  p.rope_dims = 48;  // partial rotary: the last 16 dims stay
  p.freq_base = 500000.0f;
  p.layout = layout;
  if (yarn) {
    p.freq_scale = 0.25f;
    p.ext_factor = 1.0f;
    p.original_context = 4096;
  }
  return p;
}

TEST(CudaMath, RotatingEveryPairFromTheTableIsTheReferenceRope) {
  for (const auto layout : {cpu::RopeLayout::kNormal, cpu::RopeLayout::kNeox}) {
    for (const bool yarn : {false, true}) {
      const cpu::RopeParams p = rope_params(layout, yarn);
      const std::vector<float> table = rope_table(p, 3000);
      constexpr int32_t kHeads = 4;
      for (const int32_t pos : {0, 1, 17, 2999}) {
        std::vector<float> want = testing::gaussian(size_t{kHeads} * 64, static_cast<uint32_t>(pos));
        std::vector<float> got = want;
        cpu::ref::rope(want.data(), kHeads, pos, p);
        for (int32_t h = 0; h < kHeads; ++h) {
          for (int32_t pair = 0; pair < p.rope_dims / 2; ++pair) {
            rope_rotate_pair(got.data() + h * 64, pair, p.rope_dims, layout == cpu::RopeLayout::kNeox,
                             table.data() + static_cast<size_t>(pos) * static_cast<size_t>(p.rope_dims));
          }
        }
        for (size_t i = 0; i < want.size(); ++i) {
          ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i]))
              << "pos " << pos << " element " << i << (yarn ? " (YaRN)" : "");
        }
      }
    }
  }
}

// One partition's partial of scores s against values v (head_dim d):
// m, l, acc as the attention kernels leave them.
struct Partial {
  float m = -INFINITY;
  float l = 0.0f;
  std::vector<float> acc;
};

Partial partial_of(const std::vector<float>& s, const std::vector<float>& v, int begin, int end, int d) {
  Partial p;
  p.acc.assign(static_cast<size_t>(d), 0.0f);
  for (int t = begin; t < end; ++t) p.m = std::max(p.m, s[static_cast<size_t>(t)]);
  for (int t = begin; t < end; ++t) {
    const float e = std::exp(s[static_cast<size_t>(t)] - p.m);
    p.l += e;
    for (int j = 0; j < d; ++j) p.acc[static_cast<size_t>(j)] += e * v[static_cast<size_t>(t * d + j)];
  }
  return p;
}

void fold_into(Partial& total, const Partial& part) {
  const FoldWeights w = fold_weights(total.m, part.m);
  total.m = w.m;
  total.l = fold_term(total.l, part.l, w);
  for (size_t j = 0; j < total.acc.size(); ++j) total.acc[j] = fold_term(total.acc[j], part.acc[j], w);
}

TEST(CudaMath, FoldingPartitionsInOrderIsTheWholeSoftmax) {
  constexpr int kTokens = 1000, kDim = 16, kPartition = 256;
  const std::vector<float> s = testing::gaussian(kTokens, 3, 4.0f);
  const std::vector<float> v = testing::gaussian(size_t{kTokens} * kDim, 4);
  for (const float sink : {NAN, -2.0f, 30.0f}) {
    Partial total = partial_of(s, v, 0, std::min(kTokens, kPartition), kDim);
    for (int b = kPartition; b < kTokens; b += kPartition) fold_into(total, partial_of(s, v, b, std::min(kTokens, b + kPartition), kDim));
    double max = std::isnan(sink) ? -INFINITY : sink;
    for (const float x : s) max = std::max(max, static_cast<double>(x));
    double denom = std::isnan(sink) ? 0.0 : std::exp(sink - max);
    for (const float x : s) denom += std::exp(x - max);
    const SinkWeights w = std::isnan(sink) ? SinkWeights{1.0f, total.l} : sink_weights(total.m, total.l, sink);
    for (int j = 0; j < kDim; ++j) {
      double want = 0.0;
      for (int t = 0; t < kTokens; ++t) want += std::exp(s[static_cast<size_t>(t)] - max) * v[static_cast<size_t>(t * kDim + j)];
      want /= denom;
      const float got = total.acc[static_cast<size_t>(j)] * w.acc_scale / w.l;
      EXPECT_NEAR(got, want, 1e-5 + 1e-4 * std::abs(want)) << "dim " << j << " sink " << sink;
    }
  }
}

TEST(CudaMath, AnEmptyPartitionFoldsAsNothing) {
  // A row that reads none of a partition's positions gives m = -inf, l = 0:
  // folding it changes no bit of the total, on either side.
  const std::vector<float> s = testing::gaussian(64, 5);
  const std::vector<float> v = testing::gaussian(64 * 8, 6);
  const Partial real = partial_of(s, v, 0, 64, 8);
  const Partial empty = partial_of(s, v, 0, 0, 8);
  Partial left = real;
  fold_into(left, empty);
  Partial right = empty;
  fold_into(right, real);
  for (const Partial* p : {&left, &right}) {
    EXPECT_EQ(p->m, real.m);
    EXPECT_EQ(p->l, real.l);
    EXPECT_EQ(p->acc, real.acc);
  }
}

}  // namespace
}  // namespace met::cuda
