// Tests for packed_weights.h and the kernels that read packed layouts
// (Q8_0x16, Mxfp4x16, Iq4NlX16, Q4_Kx16, Q5_Kx16, Q6_Kx16): packing is exact (every row unpacks to its GGUF
// bytes, padding rows included in the byte count), and each tier's packed
// kernel matches the scalar reference run on the row-major original
// (ref::matmul_q8_0, ref::matmul_mxfp4: the oracles), on random data over
// many shapes: m = 1 .. 9 and 64 (every row tile and a remainder), odd block
// counts (MXFP4: every count of blocks in a last unit of four), row counts
// that leave a partial last group, odd output ranges and splits at every
// offset within a group; a row's outputs are bit-identical alone or in a
// batch. MXFP4 rows include every code in both nibbles and exponents from
// the subnormal scales (e = 0, 1) to e = 201; Q4_K rows 6-bit scales and
// mins of 0 and 63 (Q5_K: and codes 0 and 31), Q6_K rows scales -128 and 127 and codes 0 and 63. The
// K-quant layouts run the same shapes with 256-input blocks in place of 32.
// Tolerance as matmul_test.cc's integer paths: 4e-6 of sum_k |w_k a_k|.
#include "backend/cpu/kernels/packed_weights.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "backend/cpu/kernels/matmul_dispatch.h"
#include "core/cpu_features.h"
#include "tensor/block_types.h"
#include "tensor/half.h"
#include "tensor/quantize.h"
#include "tensor/reference/k_scales.h"
#include "tensor/reference/reference_kernels.h"
#include "tensor/tensor_testing.h"
#include "testing/random_data.h"

namespace met::cpu {
namespace {

constexpr double kPackTolerance = 4e-6;
constexpr float kPackCanary = -12345.0f;
constexpr WeightLayout kPackedLayouts[] = {WeightLayout::kQ8_0x16, WeightLayout::kMxfp4x16,
                                           WeightLayout::kIq4NlX16, WeightLayout::kQ4_Kx16,
                                           WeightLayout::kQ5_Kx16, WeightLayout::kQ6_Kx16,
                                           WeightLayout::kF16x16, WeightLayout::kBf16x16,
                                           WeightLayout::kQ4_0x16, WeightLayout::kIq4XsX16,
                                           WeightLayout::kQ3_Kx16, WeightLayout::kQ5_0x16,
                                           WeightLayout::kQ4_1x16, WeightLayout::kQ5_1x16,
                                           WeightLayout::kQ2_Kx16};

std::string layout_name_of(WeightLayout layout) { return std::string(layout_name(layout)); }

bool is_float(WeightLayout layout) { return layout == WeightLayout::kF16x16 || layout == WeightLayout::kBf16x16; }

// Input counts each layout is checked at: the block types' multiples of 32,
// and for the float layouts (block 1) odd counts too.
std::vector<int64_t> cols_for(WeightLayout layout, std::vector<int64_t> cols) {
  if (is_float(layout)) cols.insert(cols.end(), {1, 7, 33, 161});
  return cols;
}

// The K-quant layouts' blocks are 256 inputs, the others' 32: `cols` given
// in 32-input blocks scaled to the same count of the layout's blocks.
int64_t scaled_cols(WeightLayout layout, int64_t cols) {
  const bool k_quant = layout == WeightLayout::kQ4_Kx16 || layout == WeightLayout::kQ5_Kx16 ||
                       layout == WeightLayout::kQ6_Kx16 || layout == WeightLayout::kIq4XsX16 ||
                       layout == WeightLayout::kQ3_Kx16 || layout == WeightLayout::kQ2_Kx16;
  return k_quant ? cols / kQk * kQkK : cols;
}

struct RowMajor {
  std::vector<uint8_t> bytes;
  WeightMatrix w;
};

// Hand-made extremes: Q8_0's code -128 (only hand-made bytes have it: the
// quantizer stops at -127); MXFP4's every code in both nibbles (row 0), the
// subnormal scales e = 0, 1 on a whole row (row 1), and e from 2 to 201 on
// another (row 2; far larger e would overflow float here).
void add_extremes(RowMajor& out) {
  if (out.w.type == GgmlType::kF16 || out.w.type == GgmlType::kBF16) {
    // F16: the largest finite value, a subnormal, -0; BF16: 65536, -0 (a
    // bf16 subnormal is zero to vdpbf16ps, by design).
    const bool f16 = out.w.type == GgmlType::kF16;
    const uint16_t values[] = {static_cast<uint16_t>(f16 ? 0x7BFF : 0x4780),
                               static_cast<uint16_t>(f16 ? 0x0001 : 0x8000), 0x8000};
    for (size_t i = 0; i < 3 && i < static_cast<size_t>(out.w.cols); ++i) {
      std::memcpy(out.bytes.data() + 2 * i, &values[i], sizeof(uint16_t));
    }
    return;
  }
  if (out.w.type == GgmlType::kQ8_0) {
    auto* first = reinterpret_cast<BlockQ8_0*>(out.bytes.data());
    first[0].qs[0] = -128;
    first[0].qs[1] = 127;
    return;
  }
  if (out.w.type == GgmlType::kQ4_K) {  // every 6-bit scale and min at 0 and 63, every code in both nibbles
    auto* first = reinterpret_cast<BlockQ4_K*>(out.bytes.data());
    const uint8_t scales[8] = {63, 0, 63, 1, 62, 63, 0, 63}, mins[8] = {0, 63, 63, 0, 1, 63, 62, 63};
    met::ref::pack_k4_scale_mins(scales, mins, first[0].scales);
    for (int j = 0; j < kQkK / 2; ++j) first[0].qs[j] = static_cast<uint8_t>((j % 16) | (15 - j % 16) << 4);
    return;
  }
  if (out.w.type == GgmlType::kQ5_K) {  // scales and mins 0 and 63, codes 0 and 31 (every qh bit both ways)
    auto* first = reinterpret_cast<BlockQ5_K*>(out.bytes.data());
    const uint8_t scales[8] = {63, 0, 63, 1, 62, 63, 0, 63}, mins[8] = {63, 63, 0, 0, 63, 1, 62, 63};
    met::ref::pack_k4_scale_mins(scales, mins, first[0].scales);
    for (int j = 0; j < kQkK / 2; ++j) first[0].qs[j] = static_cast<uint8_t>(j % 3 == 0 ? 0xFF : 0x00);
    for (int j = 0; j < kQkK / 8; ++j) first[0].qh[j] = static_cast<uint8_t>(j % 2 == 0 ? 0xFF : 0x00);
    return;
  }
  if (out.w.type == GgmlType::kQ6_K) {  // scales -128 and 127, codes 0 and 63 (all bits of ql, qh)
    auto* first = reinterpret_cast<BlockQ6_K*>(out.bytes.data());
    first[0].scales[0] = -128;
    first[0].scales[15] = 127;
    first[0].ql[0] = 0xFF;
    first[0].qh[0] = 0xFF;
    first[0].ql[1] = 0x00;
    first[0].qh[1] = 0x00;
    return;
  }
  if (out.w.type == GgmlType::kQ5_0) {  // every code in both nibbles, every fifth bit both ways
    auto* first = reinterpret_cast<BlockQ5_0*>(out.bytes.data());
    for (int j = 0; j < kQk / 2; ++j) first[0].qs[j] = static_cast<uint8_t>(j | (15 - j) << 4);
    const uint8_t qh[4] = {0xFF, 0x00, 0xA5, 0x5A};
    std::memcpy(first[0].qh, qh, sizeof(qh));
    return;
  }
  if (out.w.type == GgmlType::kQ4_1 || out.w.type == GgmlType::kQ5_1) {  // every code; a negative and a zero min
    const bool q5 = out.w.type == GgmlType::kQ5_1;
    auto block = [&](int64_t b) { return out.bytes.data() + static_cast<size_t>(b) * (q5 ? 24 : 20); };
    for (int j = 0; j < kQk / 2; ++j) block(0)[(q5 ? 8 : 4) + j] = static_cast<uint8_t>(j | (15 - j) << 4);
    const uint16_t negative = 0xBC00, zero = 0x0000;  // -1.0, 0.0
    std::memcpy(block(0) + 2, &negative, sizeof(negative));
    if (out.w.cols >= 2 * kQk) std::memcpy(block(1) + 2, &zero, sizeof(zero));
    if (q5) {
      const uint8_t qh[4] = {0x0F, 0xF0, 0x3C, 0xC3};
      std::memcpy(block(0) + 4, qh, sizeof(qh));
    }
    return;
  }
  if (out.w.type == GgmlType::kQ2_K) {  // scales and mins 0 and 15 (every nibble bit both ways), codes 0 and 3
    auto* first = reinterpret_cast<BlockQ2_K*>(out.bytes.data());
    for (int g = 0; g < 16; ++g) {
      first[0].scales[g] = static_cast<uint8_t>(g % 3 == 0 ? 0xF0 : (g % 3 == 1 ? 0x0F : 0xFF));
    }
    for (int j = 0; j < kQkK / 4; ++j) first[0].qs[j] = static_cast<uint8_t>(j % 2 == 0 ? 0xFF : 0x00);
    return;
  }
  if (out.w.type == GgmlType::kQ3_K) {  // scales -32 and 31 (every bit both ways), codes 0 and 7
    auto* first = reinterpret_cast<BlockQ3_K*>(out.bytes.data());
    uint8_t stored[16];
    for (int g = 0; g < 16; ++g) stored[g] = static_cast<uint8_t>(g % 2 == 0 ? 0 : 63);
    met::ref::pack_q3_k_scales(stored, first[0].scales);
    for (int j = 0; j < kQkK / 4; ++j) first[0].qs[j] = static_cast<uint8_t>(j % 2 == 0 ? 0xFF : 0x00);
    for (int j = 0; j < kQkK / 8; ++j) first[0].hmask[j] = static_cast<uint8_t>(j % 3 == 0 ? 0xFF : 0x00);
    return;
  }
  if (out.w.type == GgmlType::kIQ4_XS) {  // scales ls 0 and 63 (every bit both ways), every code in both nibbles
    auto* first = reinterpret_cast<BlockIq4Xs*>(out.bytes.data());
    first[0].scales_h = 0xF00F;  // the top bits of groups 0, 1, 6, 7 set, of 2 .. 5 clear
    first[0].scales_l[0] = 0xF0;  // ls: group 0 48, group 1 63
    first[0].scales_l[1] = 0xF0;  // group 2 0, group 3 15
    first[0].scales_l[3] = 0x0F;  // group 6 63, group 7 48
    for (int j = 0; j < kQkK / 2; ++j) first[0].qs[j] = static_cast<uint8_t>((j % 16) | (15 - j % 16) << 4);
    return;
  }
  const int64_t num_blocks = out.w.cols / kQk;
  if (out.w.type == GgmlType::kIQ4_NL || out.w.type == GgmlType::kQ4_0) {
    // Every code in both nibbles; fp16 d of both signs, subnormal and 0 (a
    // Q4_0 block is an IQ4_NL block's bytes: d, then the same nibbles).
    static_assert(sizeof(BlockQ4_0) == sizeof(BlockIq4Nl));
    auto row = [&](int64_t n) { return reinterpret_cast<BlockIq4Nl*>(out.bytes.data() + n * out.w.row_bytes); };
    for (int j = 0; j < kQk / 2; ++j) row(0)[0].qs[j] = static_cast<uint8_t>(j | (15 - j) << 4);
    const uint16_t scales[] = {0x0001, 0x8400, 0x0000, 0x3C00};
    for (int64_t b = 0; b < num_blocks && out.w.rows > 1; ++b) row(1)[b].d = scales[b % 4];
    return;
  }
  auto row = [&](int64_t n) { return reinterpret_cast<BlockMxfp4*>(out.bytes.data() + n * out.w.row_bytes); };
  for (int j = 0; j < kQk / 2; ++j) row(0)[0].qs[j] = static_cast<uint8_t>(j | (15 - j) << 4);
  for (int64_t b = 0; b < num_blocks && out.w.rows > 1; ++b) row(1)[b].e = static_cast<uint8_t>(b % 2);
  for (int64_t b = 0; b < num_blocks && out.w.rows > 2; ++b) row(2)[b].e = static_cast<uint8_t>(2 + 37 * b % 200);
}

// Random rows of `type` and varied scale, with add_extremes' bytes.
RowMajor random_rows(GgmlType type, int64_t rows, int64_t cols, uint32_t seed) {
  const size_t row_bytes = *ggml_row_bytes(type, static_cast<uint64_t>(cols));
  RowMajor out{std::vector<uint8_t>(row_bytes * static_cast<size_t>(rows)), {}};
  std::mt19937 rng(seed);
  met::testing::UniformFloat log_scale(-4.0f, 1.0f);
  for (int64_t n = 0; n < rows; ++n) {
    const std::vector<float> x = testing::gaussian_with_outliers(
        static_cast<size_t>(cols), seed * 131 + static_cast<uint32_t>(n), std::exp(log_scale(rng)));
    std::span<uint8_t> dst(out.bytes.data() + static_cast<size_t>(n) * row_bytes, row_bytes);
    EXPECT_TRUE(quantize_row(type, x, dst).ok());
  }
  out.w = {type, out.bytes.data(), rows, cols, row_bytes};
  add_extremes(out);
  return out;
}

TEST(PackedWeights, EveryLayoutUnpacksToTheSameRows) {
  for (const WeightLayout layout : kPackedLayouts) {
    for (const int64_t rows : {1, 3, 15, 16, 17, 40}) {
      for (const int64_t block_cols : cols_for(layout, {32, 64, 96, 128, 160, 224, 1056})) {
        const int64_t cols = scaled_cols(layout, block_cols);
        const RowMajor src = random_rows(packed_type(layout), rows, cols, static_cast<uint32_t>(rows * 7 + cols));
        WeightArena arena;
        const PackedMatrix packed = PackedMatrix::pack(src.w, layout, arena);
        const WeightMatrix& p = packed.matrix();
        EXPECT_EQ(p.layout, layout);
        EXPECT_EQ(p.rows, rows);
        EXPECT_EQ(p.cols, cols);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(p.data) % 64, 0u);
        std::vector<uint8_t> row(src.w.row_bytes);
        for (int64_t n = 0; n < rows; ++n) {
          unpack_row(p, n, row.data());
          EXPECT_EQ(
              std::memcmp(row.data(), src.bytes.data() + static_cast<size_t>(n) * src.w.row_bytes, row.size()),
              0)
              << layout_name_of(layout) << " rows=" << rows << " cols=" << cols << " row " << n;
        }
      }
    }
  }
}

// A matrix split out of an interleaved one (qwen3next's legacy ssm_in) holds
// the named rows bit for bit, in the order named, and packs as any other.
TEST(PackedWeights, GatheredRowsAreTheNamedRowsInOrder) {
  const RowMajor src = random_rows(GgmlType::kQ8_0, 12, 64, 9);
  const std::vector<int64_t> pick = {7, 0, 11, 3, 3};
  WeightArena arena;
  const PackedMatrix gathered = PackedMatrix::gather_rows(src.w, pick, arena);
  const WeightMatrix& g = gathered.matrix();
  EXPECT_EQ(g.layout, WeightLayout::kRows);
  EXPECT_EQ(g.rows, 5);
  EXPECT_EQ(g.cols, 64);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(g.data) % 64, 0u);
  const PackedMatrix packed = PackedMatrix::pack(g, WeightLayout::kQ8_0x16, arena);
  std::vector<uint8_t> row(src.w.row_bytes);
  for (size_t i = 0; i < pick.size(); ++i) {
    const uint8_t* want = src.bytes.data() + static_cast<size_t>(pick[i]) * src.w.row_bytes;
    EXPECT_EQ(std::memcmp(g.data + i * g.row_bytes, want, row.size()), 0) << i;
    unpack_row(packed.matrix(), static_cast<int64_t>(i), row.data());
    EXPECT_EQ(std::memcmp(row.data(), want, row.size()), 0) << i;
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

TEST(PackedWeights, Mxfp4x16TakesWholeGroupsOfCacheLines) {
  EXPECT_EQ(mxfp4x16_group_bytes(128), 1088u);                // one unit of four blocks
  EXPECT_EQ(mxfp4x16_group_bytes(32), 256u + 64u);            // a last unit of one block
  EXPECT_EQ(mxfp4x16_group_bytes(224), 1088u + 3 * 256 + 64);  // and of three
  EXPECT_EQ(mxfp4x16_group_bytes(4096), 32u * 1088u);
  EXPECT_EQ(mxfp4x16_group_bytes(160) % 64, 0u);
  // Same bytes as the row-major matrix once rows fill whole groups and units.
  EXPECT_EQ(layout_bytes(WeightLayout::kMxfp4x16, GgmlType::kMXFP4, 32, 4096),
            layout_bytes(WeightLayout::kRows, GgmlType::kMXFP4, 32, 4096));
  EXPECT_EQ(layout_bytes(WeightLayout::kMxfp4x16, GgmlType::kMXFP4, 17, 128), 2u * 1088u);
  EXPECT_EQ(layout_groups(WeightLayout::kMxfp4x16, 17), 2);
}

TEST(PackedWeights, Iq4NlX16TakesWholeGroupsOfCacheLines) {
  EXPECT_EQ(iq4_nlx16_group_bytes(128), 1152u);                // one unit of four blocks: 18 lines
  EXPECT_EQ(iq4_nlx16_group_bytes(32), 256u + 128u);           // a last unit of one block
  EXPECT_EQ(iq4_nlx16_group_bytes(224), 1152u + 3 * 256 + 128);
  EXPECT_EQ(iq4_nlx16_group_bytes(160) % 64, 0u);
  // Whole groups and units hold the GGUF bytes exactly: 18 bytes a block-row.
  EXPECT_EQ(layout_bytes(WeightLayout::kIq4NlX16, GgmlType::kIQ4_NL, 32, 4096),
            layout_bytes(WeightLayout::kRows, GgmlType::kIQ4_NL, 32, 4096));
  EXPECT_EQ(layout_groups(WeightLayout::kIq4NlX16, 17), 2);
  // Q4_0x16 is the same bytes (a Q4_0 block is an IQ4_NL block's size).
  EXPECT_EQ(layout_bytes(WeightLayout::kQ4_0x16, GgmlType::kQ4_0, 17, 224),
            layout_bytes(WeightLayout::kIq4NlX16, GgmlType::kIQ4_NL, 17, 224));
  // Q5_0x16: 64 bytes of qh a block after the unit's nibbles (22 bytes a
  // block-row, as the GGUF rows).
  EXPECT_EQ(q5_0x16_group_bytes(128), 1408u);
  EXPECT_EQ(q5_0x16_group_bytes(96), 3u * 320 + 128);
  EXPECT_EQ(layout_bytes(WeightLayout::kQ5_0x16, GgmlType::kQ5_0, 32, 4096),
            layout_bytes(WeightLayout::kRows, GgmlType::kQ5_0, 32, 4096));
  EXPECT_EQ(layout_bytes(WeightLayout::kQ4_0x16, GgmlType::kQ4_0, 32, 4096),
            layout_bytes(WeightLayout::kRows, GgmlType::kQ4_0, 32, 4096));
}

TEST(PackedWeights, KQuantX16TakesWholeCacheLinesPerSuperBlock) {
  EXPECT_EQ(layout_bytes(WeightLayout::kQ4_Kx16, GgmlType::kQ4_K, 16, 256), 2368u);  // 37 lines
  EXPECT_EQ(layout_bytes(WeightLayout::kQ6_Kx16, GgmlType::kQ6_K, 16, 256), 3392u);  // 53 lines
  // Q4_K: the GGUF bytes and 2 per row and super-block of unpacked scales.
  EXPECT_EQ(layout_bytes(WeightLayout::kQ4_Kx16, GgmlType::kQ4_K, 32, 4096),
            layout_bytes(WeightLayout::kRows, GgmlType::kQ4_K, 32, 4096) + 32u * 16 * 4);
  EXPECT_EQ(layout_bytes(WeightLayout::kQ6_Kx16, GgmlType::kQ6_K, 17, 512), 2u * 2 * 3392);
  EXPECT_EQ(layout_bytes(WeightLayout::kQ5_Kx16, GgmlType::kQ5_K, 16, 256), 2880u);  // 45 lines
  EXPECT_EQ(layout_groups(WeightLayout::kQ4_Kx16, 17), 2);
  // IQ4_XS: the GGUF bytes (136 a row and super-block) and 4 more a row.
  EXPECT_EQ(layout_bytes(WeightLayout::kIq4XsX16, GgmlType::kIQ4_XS, 16, 256), 2240u);  // 35 lines
  EXPECT_EQ(layout_bytes(WeightLayout::kQ3_Kx16, GgmlType::kQ3_K, 16, 256), 1856u);     // 29 lines
  // Q2_K: the GGUF bytes exactly (84 a row and super-block).
  EXPECT_EQ(layout_bytes(WeightLayout::kQ2_Kx16, GgmlType::kQ2_K, 16, 256), 1344u);  // 21 lines
  EXPECT_EQ(layout_bytes(WeightLayout::kQ2_Kx16, GgmlType::kQ2_K, 32, 4096),
            layout_bytes(WeightLayout::kRows, GgmlType::kQ2_K, 32, 4096));
  EXPECT_EQ(layout_bytes(WeightLayout::kIq4XsX16, GgmlType::kIQ4_XS, 32, 4096),
            layout_bytes(WeightLayout::kRows, GgmlType::kIQ4_XS, 32, 4096) + 32u * 16 * 4);
}

TEST(PackedWeights, PreferredLayoutHasASelectedKernel) {
  for (const GgmlType type : {GgmlType::kF32, GgmlType::kF16, GgmlType::kBF16, GgmlType::kQ8_0,
                              GgmlType::kQ4_0, GgmlType::kMXFP4, GgmlType::kQ4_K, GgmlType::kQ6_K,
                              GgmlType::kIQ4_NL, GgmlType::kIQ4_XS, GgmlType::kQ3_K, GgmlType::kQ5_0,
                              GgmlType::kQ2_K}) {
    const WeightLayout layout = preferred_layout(type);
    if (layout != WeightLayout::kRows) {
      EXPECT_NE(selected_matmul_kernels(type).matmul_packed, nullptr) << ggml_type_name(type);
      EXPECT_EQ(packed_type(layout), type);
    }
  }
  EXPECT_EQ(preferred_layout(GgmlType::kF32), WeightLayout::kRows);
}

TEST(PackedWeights, FloatLayoutsTakeTheRowsBytes) {
  // 16 rows x 2-byte inputs: exactly the row-major bytes for whole groups;
  // Bf16x16 pads an odd input count to a pair.
  EXPECT_EQ(layout_bytes(WeightLayout::kF16x16, GgmlType::kF16, 32, 4096),
            layout_bytes(WeightLayout::kRows, GgmlType::kF16, 32, 4096));
  EXPECT_EQ(layout_bytes(WeightLayout::kBf16x16, GgmlType::kBF16, 32, 4096),
            layout_bytes(WeightLayout::kRows, GgmlType::kBF16, 32, 4096));
  EXPECT_EQ(layout_bytes(WeightLayout::kF16x16, GgmlType::kF16, 17, 7), 2u * 16 * 7 * 2);
  EXPECT_EQ(layout_bytes(WeightLayout::kBf16x16, GgmlType::kBF16, 17, 7), 2u * 16 * 8 * 2);
  EXPECT_EQ(layout_groups(WeightLayout::kBf16x16, 17), 2);
}

struct PackProblem {
  RowMajor rows;
  WeightArena arena;  // packed's bytes
  PackedMatrix packed;
  int64_t m = 0;
  std::vector<uint8_t> act;  // prepared by the reference
};

PackProblem make_problem(WeightLayout layout, int64_t m, int64_t rows, int64_t cols, uint32_t seed) {
  const GgmlType type = packed_type(layout);
  PackProblem p{random_rows(type, rows, cols, seed), WeightArena(), {}, m, {}};
  p.packed = PackedMatrix::pack(p.rows.w, layout, p.arena);
  const std::vector<float> x = testing::gaussian_with_outliers(static_cast<size_t>(m * cols), seed + 7, 1.0f);
  p.act.resize(static_cast<size_t>(m) * activation_row_bytes(type, cols));
  prepare_activations_with(matmul_kernels_for_isa(type, Isa::kScalar), type, x.data(), cols, cols, 0, m,
                           p.act.data());
  return p;
}

std::vector<float> run(const MatmulKernels& kernels, const WeightMatrix& w, const PackProblem& p, int64_t n_begin,
                       int64_t n_end) {
  std::vector<float> y(static_cast<size_t>(p.m * w.rows), kPackCanary);
  matmul_with(kernels, w, p.act.data(), p.m, y.data(), w.rows, n_begin, n_end);
  return y;
}

// sum_k |w_k a_k| per output (the scale errors are measured against), from
// the dequantized weights and activations (both exact in float).
std::vector<double> pack_magnitudes(const PackProblem& p) {
  const int64_t cols = p.rows.w.cols, rows = p.rows.w.rows;
  const size_t act_row = activation_row_bytes(p.rows.w.type, cols);
  std::vector<float> w(static_cast<size_t>(rows * cols)), a(static_cast<size_t>(p.m * cols));
  for (int64_t n = 0; n < rows; ++n) {
    std::span<const uint8_t> src(p.rows.bytes.data() + static_cast<size_t>(n) * p.rows.w.row_bytes,
                                 p.rows.w.row_bytes);
    EXPECT_TRUE(dequantize_row(p.rows.w.type, src, std::span<float>(w.data() + n * cols, cols)).ok());
  }
  for (int64_t i = 0; i < p.m; ++i) {
    const uint8_t* row = p.act.data() + static_cast<size_t>(i) * act_row;
    float* dst = a.data() + i * cols;
    const GgmlType type = p.rows.w.type;
    if (type == GgmlType::kF16) {
      std::memcpy(dst, row, static_cast<size_t>(cols) * sizeof(float));
    } else if (type == GgmlType::kBF16) {
      for (int64_t k = 0; k < cols; ++k) {
        const uint32_t bits = static_cast<uint32_t>(row[2 * k] | row[2 * k + 1] << 8) << 16;
        std::memcpy(dst + k, &bits, sizeof(float));
      }
    } else if (type == GgmlType::kQ4_K || type == GgmlType::kQ5_K || type == GgmlType::kQ6_K ||
               type == GgmlType::kIQ4_XS || type == GgmlType::kQ3_K || type == GgmlType::kQ2_K) {
      met::ref::dequantize_row_q8_k(row, dst, cols);
    } else {
      met::ref::dequantize_row_q8_0(row, dst, cols);
    }
  }
  std::vector<double> out(static_cast<size_t>(p.m * rows));
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t n = 0; n < rows; ++n) {
      double sum = 0.0;
      for (int64_t k = 0; k < cols; ++k) sum += std::fabs(static_cast<double>(w[n * cols + k]) * a[i * cols + k]);
      out[static_cast<size_t>(i * rows + n)] = sum;
    }
  }
  return out;
}

// Outputs in range within tolerance of the reference, canaries elsewhere.
// The absolute slack is below every nonzero output here (row 1's subnormal
// scales give outputs near 1e-36), so those are checked relatively too.
// `magnitude`: pack_magnitudes(p), computed once per problem by callers that
// check several runs of it.
void expect_close(const PackProblem& p, const std::vector<double>& magnitude, const std::vector<float>& actual,
                  const std::vector<float>& expected, int64_t n_begin, int64_t n_end, const std::string& what) {
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
      if (!(error <= kPackTolerance * magnitude[idx] + 1e-44) && ++failures < 5) {
        ADD_FAILURE() << what << " y[" << i << "][" << n << "] = " << actual[idx] << ", reference "
                      << expected[idx] << ", error " << error / (magnitude[idx] + 1e-300) << " of sum|w a|";
      }
    }
  }
  EXPECT_EQ(failures, 0) << what;
}

void expect_close(const PackProblem& p, const std::vector<float>& actual, const std::vector<float>& expected,
                  int64_t n_begin, int64_t n_end, const std::string& what) {
  expect_close(p, pack_magnitudes(p), actual, expected, n_begin, n_end, what);
}

// Each packed layout's kernel of each tier the CPU has, against the
// reference on the row-major matrix.
class PackedKernels : public ::testing::TestWithParam<std::tuple<WeightLayout, Isa>> {
 protected:
  void SetUp() override {
    const auto [layout, isa] = GetParam();
    if (!isa_supported(detect_cpu_features(), isa)) {
      GTEST_SKIP() << "this CPU lacks " << isa_name(isa) << "; its kernels are not checked here";
    }
    layout_ = layout;
    const GgmlType type = packed_type(layout);
    kernels_ = matmul_kernels_for_isa(type, isa);
    if (kernels_.matmul_packed == nullptr) {
      GTEST_SKIP() << isa_name(isa) << " has no " << layout_name_of(layout) << " kernel";
    }
    reference_ = matmul_kernels_for_isa(type, Isa::kScalar);
    kernels_.prepare = reference_.prepare;
  }
  PackProblem problem(int64_t m, int64_t rows, int64_t cols, uint32_t seed) const {
    return make_problem(layout_, m, rows, cols, seed);
  }
  WeightLayout layout_ = WeightLayout::kRows;
  MatmulKernels kernels_;
  MatmulKernels reference_;
};

std::string describe(int64_t m, int64_t rows, int64_t cols, int64_t n_begin, int64_t n_end) {
  return "m=" + std::to_string(m) + " rows=" + std::to_string(rows) + " cols=" + std::to_string(cols) +
         " n=[" + std::to_string(n_begin) + "," + std::to_string(n_end) + ")";
}

TEST_P(PackedKernels, MatchTheReferenceOnManyShapes) {
  for (const int64_t rows : {16, 37}) {
    for (const int64_t block_cols : cols_for(layout_, {32, 64, 96, 128, 160, 224, 512, 1056})) {
      const int64_t cols = scaled_cols(layout_, block_cols);
      for (const int64_t m : {1, 2, 3, 4, 5, 7, 9, 64}) {
        const PackProblem p = problem(m, rows, cols, static_cast<uint32_t>(m * 1000 + cols + rows));
        const std::vector<float> expected = run(reference_, p.rows.w, p, 0, rows);
        const std::vector<double> magnitude = pack_magnitudes(p);
        for (const auto& [n_begin, n_end] :
             {std::pair<int64_t, int64_t>{0, rows}, {5, 22}, {13, 14}, {16, rows}, {3, 11}, {8, 9}}) {
          if (n_end > rows) continue;
          expect_close(p, magnitude, run(kernels_, p.packed.matrix(), p, n_begin, n_end), expected, n_begin, n_end,
                       describe(m, rows, cols, n_begin, n_end));
        }
      }
    }
  }
}

TEST_P(PackedKernels, SplitsAgreeBitForBit) {
  constexpr int64_t kRows = 45;
  const PackProblem p = problem(17, kRows, scaled_cols(layout_, 96), 5);
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

TEST_P(PackedKernels, RowsAreTheSameAloneOrInABatch) {
  // Batch invariance: an activation row's outputs do not depend on which row
  // tile it lands in, nor on the other rows. 11 and 13 rows: the kernels
  // that walk groups in pairs past 4 rows end on tiles of 2 and 1 rows.
  constexpr int64_t kRows = 37;
  const int64_t cols = scaled_cols(layout_, 160);
  for (const int64_t m : {11, 13}) {
    const PackProblem p = problem(m, kRows, cols, 21);
    const std::vector<float> batch = run(kernels_, p.packed.matrix(), p, 0, kRows);
    const size_t act_row = activation_row_bytes(p.rows.w.type, cols);
    for (int64_t i = 0; i < m; ++i) {
      std::vector<float> alone(kRows, kPackCanary);
      matmul_with(kernels_, p.packed.matrix(), p.act.data() + static_cast<size_t>(i) * act_row, 1, alone.data(),
                  kRows, 0, kRows);
      EXPECT_EQ(std::memcmp(alone.data(), batch.data() + i * kRows, kRows * sizeof(float)), 0)
          << "m " << m << " row " << i;
    }
  }
}

TEST_P(PackedKernels, LongRowsStayWithinTolerance) {
  for (const int64_t cols : {4096, 11008}) {
    const PackProblem p = problem(3, 32, cols, 99);
    expect_close(p, run(kernels_, p.packed.matrix(), p, 0, 32), run(reference_, p.rows.w, p, 0, 32), 0, 32,
                 describe(3, 32, cols, 0, 32));
  }
}

TEST_P(PackedKernels, ManyActivationRowsAreSplitIntoCacheSizedCalls) {
  // 300 rows of 4096 activations exceed one cache block (matmul.cc).
  const PackProblem p = problem(300, 16, 4096, 4);
  expect_close(p, run(kernels_, p.packed.matrix(), p, 0, 16), run(reference_, p.rows.w, p, 0, 16), 0, 16,
               "m=300");
}

TEST(PackedWeights, PublicMatmulRunsThePreferredLayout) {
  for (const WeightLayout layout : kPackedLayouts) {
    const GgmlType type = packed_type(layout);
    if (preferred_layout(type) != layout) {
      GTEST_LOG_(INFO) << "no packed " << ggml_type_name(type) << " kernel selected on this CPU";
      continue;
    }
    const PackProblem p = make_problem(layout, 3, 37, scaled_cols(layout, 160), 8);
    std::vector<float> y(static_cast<size_t>(3 * 37), kPackCanary);
    matmul(p.packed.matrix(), p.act.data(), 3, y.data(), 37, 0, 37);
    expect_close(p, y, run(matmul_kernels_for_isa(type, Isa::kScalar), p.rows.w, p, 0, 37), 0, 37,
                 layout_name_of(layout) + " selected");
  }
}

// The AVX-VNNI kernels sum the same exact integers as AVX2's (vpdpbusd in
// place of vpmaddubsw and vpmaddwd) and scale them in the same float steps,
// so their outputs are AVX2's bit for bit, at every tile height and at odd
// output ranges.
TEST(PackedWeights, AvxVnniKernelsGiveAvx2sOutputsBitForBit) {
  if (!isa_supported(detect_cpu_features(), Isa::kAvxVnni)) {
    GTEST_SKIP() << "this CPU lacks avxvnni; its kernels are not checked here";
  }
  int checked = 0;
  for (const WeightLayout layout : kPackedLayouts) {
    const GgmlType type = packed_type(layout);
    MatmulKernels vnni = matmul_kernels_for_isa(type, Isa::kAvxVnni);
    if (vnni.matmul_packed == nullptr) continue;
    MatmulKernels avx2 = matmul_kernels_for_isa(type, Isa::kAvx2);
    vnni.prepare = avx2.prepare = matmul_kernels_for_isa(type, Isa::kScalar).prepare;
    for (const int64_t m : {1, 2, 3, 4, 5, 9}) {
      const PackProblem p = make_problem(layout, m, 37, scaled_cols(layout, 96), static_cast<uint32_t>(m));
      const std::vector<float> got = run(vnni, p.packed.matrix(), p, 3, 35);
      const std::vector<float> want = run(avx2, p.packed.matrix(), p, 3, 35);
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i]))
            << layout_name_of(layout) << " m=" << m << " output " << i << ": " << got[i] << " vs " << want[i];
      }
    }
    ++checked;
  }
  EXPECT_EQ(checked, 11) << "Q8_0x16, the six nibble layouts, Q4_Kx16, Q5_Kx16, Q6_Kx16 and Iq4XsX16";
}

INSTANTIATE_TEST_SUITE_P(Tiers, PackedKernels,
                         ::testing::Combine(::testing::ValuesIn(kPackedLayouts),
                                            ::testing::Values(Isa::kAvx2, Isa::kAvxVnni, Isa::kAvx512, Isa::kAmx)),
                         [](const ::testing::TestParamInfo<std::tuple<WeightLayout, Isa>>& tier) {
                           return layout_name_of(std::get<0>(tier.param)) + "_" +
                                  std::string(isa_name(std::get<1>(tier.param)));
                         });

}  // namespace
}  // namespace met::cpu
