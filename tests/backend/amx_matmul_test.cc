// Tests for the AMX tier's matmul (matmul_x16_amx.h and matmul_kx16_amx.h
// over amx_tiles.h):
// the tile unit's emulation follows the instructions' definition (signed
// times unsigned bytes, 4 to an int32 lane, accumulated; a shape the
// configuration does not allow faults), and the driver, on the emulation
// (every AVX-512 CPU) and on the instructions (AMX CPUs only; skipped, saying
// so, elsewhere), gives every output bit for bit what the AVX-512 kernel of
// the same layout gives, for each packed layout with ActQ8_0 activations
// and each packed K-quant layout:
// batches of whole 16-row tiles, of 1 to 4 tiles a pass, with rows left
// over for the vector kernel, blocks in full and partial units, odd output
// ranges; so a row's outputs are the same whichever kernel runs it, alone or
// in a batch. (The AVX-512 kernels are checked against the scalar
// reference in packed_weights_test.cc, and so are the AMX tier's through
// its PackedKernels instantiation on AMX CPUs.)
#include <gtest/gtest.h>

#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "backend/cpu/kernels/amx_tiles.h"
#include "backend/cpu/kernels/matmul_dispatch.h"
#include "backend/cpu/kernels/matmul_kernels.h"
#include "backend/cpu/kernels/packed_weights.h"
#include "core/cpu_features.h"
#include "tensor/quantize.h"
#include "tensor/tensor_testing.h"

namespace met::cpu {
namespace {

TEST(EmulatedTiles, DotIsSignedBytesTimesUnsignedBytesFourToALane) {
  // C (2 rows x 3 lanes) += A (2 rows x 8 bytes) . B (2 rows x 12 bytes).
  static constexpr TileConfig kSmall = make_tile_config({2, 2, 2, 0, 0, 0, 0, 0}, {12, 8, 12, 0, 0, 0, 0, 0});
  int8_t a[2][8];
  uint8_t b[2][12];
  int32_t c[2][3] = {{5, -7, 1 << 20}, {0, 3, -1}};
  for (int i = 0; i < 8; ++i) {
    a[0][i] = static_cast<int8_t>(i % 2 == 0 ? -128 : 127 - i);
    a[1][i] = static_cast<int8_t>(i * 13 - 50);
  }
  for (int i = 0; i < 12; ++i) {
    b[0][i] = static_cast<uint8_t>(i % 3 == 0 ? 255 : 17 * i);
    b[1][i] = static_cast<uint8_t>(200 - 9 * i);
  }
  int32_t want[2][3];
  for (int m = 0; m < 2; ++m) {
    for (int n = 0; n < 3; ++n) {
      want[m][n] = c[m][n];
      for (int k = 0; k < 2; ++k) {
        for (int i = 0; i < 4; ++i) want[m][n] += a[m][4 * k + i] * static_cast<int32_t>(b[k][4 * n + i]);
      }
    }
  }
  EmulatedTiles::configure(kSmall);
  EmulatedTiles::load<0>(c, sizeof(c[0]));
  EmulatedTiles::load<1>(a, sizeof(a[0]));
  EmulatedTiles::load<2>(b, sizeof(b[0]));
  EmulatedTiles::dot_signed_unsigned<0, 1, 2>();
  int32_t got[2][3] = {};
  EmulatedTiles::store<0>(got, sizeof(got[0]));
  EmulatedTiles::release();
  EXPECT_EQ(std::memcmp(got, want, sizeof(want)), 0);
  EXPECT_EQ(got[0][0], want[0][0]);
  EXPECT_EQ(got[1][2], want[1][2]);
}

TEST(EmulatedTilesDeathTest, AShapeTheConfigurationDoesNotAllowFaults) {
  // A's 8 bytes a row make 2 rows of B, not 3.
  static constexpr TileConfig kBad = make_tile_config({2, 2, 3, 0, 0, 0, 0, 0}, {12, 8, 12, 0, 0, 0, 0, 0});
  auto misshapen = [] {
    EmulatedTiles::configure(kBad);
    EmulatedTiles::dot_signed_unsigned<0, 1, 2>();
  };
  EXPECT_DEATH(misshapen(), "would fault");
  EXPECT_DEATH(EmulatedTiles::zero<3>(), "would fault");  // no configuration on this thread
}

struct Layout {
  WeightLayout layout;
  MatmulKernelFn vector;
  MatmulKernelFn emulated;
  MatmulKernelFn amx;
};

const Layout kLayouts[] = {
    {WeightLayout::kQ8_0x16, avx512::matmul_q8_0x16, amx_emulated::matmul_q8_0x16, amx::matmul_q8_0x16},
    {WeightLayout::kMxfp4x16, avx512::matmul_mxfp4x16, amx_emulated::matmul_mxfp4x16, amx::matmul_mxfp4x16},
    {WeightLayout::kIq4NlX16, avx512::matmul_iq4_nlx16, amx_emulated::matmul_iq4_nlx16, amx::matmul_iq4_nlx16},
    {WeightLayout::kQ4_0x16, avx512::matmul_q4_0x16, amx_emulated::matmul_q4_0x16, amx::matmul_q4_0x16},
    {WeightLayout::kQ5_0x16, avx512::matmul_q5_0x16, amx_emulated::matmul_q5_0x16, amx::matmul_q5_0x16},
    {WeightLayout::kQ4_1x16, avx512::matmul_q4_1x16, amx_emulated::matmul_q4_1x16, amx::matmul_q4_1x16},
    {WeightLayout::kQ5_1x16, avx512::matmul_q5_1x16, amx_emulated::matmul_q5_1x16, amx::matmul_q5_1x16},
    {WeightLayout::kQ4_Kx16, avx512::matmul_q4_kx16, amx_emulated::matmul_q4_kx16, amx::matmul_q4_kx16},
    {WeightLayout::kQ5_Kx16, avx512::matmul_q5_kx16, amx_emulated::matmul_q5_kx16, amx::matmul_q5_kx16},
    {WeightLayout::kQ6_Kx16, avx512::matmul_q6_kx16, amx_emulated::matmul_q6_kx16, amx::matmul_q6_kx16},
    {WeightLayout::kQ3_Kx16, avx512::matmul_q3_kx16, amx_emulated::matmul_q3_kx16, amx::matmul_q3_kx16},
    {WeightLayout::kIq4XsX16, avx512::matmul_iq4_xsx16, amx_emulated::matmul_iq4_xsx16, amx::matmul_iq4_xsx16},
    {WeightLayout::kQ2_Kx16, avx512::matmul_q2_kx16, amx_emulated::matmul_q2_kx16, amx::matmul_q2_kx16},
};

bool k_quant(WeightLayout layout) {
  return layout == WeightLayout::kQ4_Kx16 || layout == WeightLayout::kQ5_Kx16 || layout == WeightLayout::kQ6_Kx16 ||
         layout == WeightLayout::kQ3_Kx16 || layout == WeightLayout::kIq4XsX16 || layout == WeightLayout::kQ2_Kx16;
}

// Input counts: 1 to 7 blocks of 32 (every count in a last unit), or 1 to 3
// super-blocks of 256.
std::vector<int64_t> cols_for(WeightLayout layout) {
  if (k_quant(layout)) return {256, 512, 768};
  return {32, 64, 96, 160, 224};
}

// A rows x cols matrix of the layout's type (random, varied scales), packed,
// and m activation rows prepared by the reference.
struct Problem {
  std::vector<uint8_t> bytes;
  WeightArena arena;
  PackedMatrix packed;
  std::vector<uint8_t> act;
};

Problem make_problem(WeightLayout layout, int64_t m, int64_t rows, int64_t cols, uint32_t seed) {
  const GgmlType type = packed_type(layout);
  const size_t row_bytes = *ggml_row_bytes(type, static_cast<uint64_t>(cols));
  Problem p;
  p.bytes.resize(row_bytes * static_cast<size_t>(rows));
  for (int64_t n = 0; n < rows; ++n) {
    const float scale = n % 3 == 0 ? 0.01f : (n % 3 == 1 ? 1.0f : 40.0f);
    const std::vector<float> x =
        testing::gaussian_with_outliers(static_cast<size_t>(cols), seed * 31 + static_cast<uint32_t>(n), scale);
    EXPECT_TRUE(quantize_row(type, x, std::span<uint8_t>(p.bytes.data() + n * row_bytes, row_bytes)).ok());
  }
  const WeightMatrix w{type, p.bytes.data(), rows, cols, row_bytes};
  p.packed = PackedMatrix::pack(w, layout, p.arena);
  const std::vector<float> x = testing::gaussian_with_outliers(static_cast<size_t>(m * cols), seed + 5, 1.0f);
  p.act.resize(static_cast<size_t>(m) * activation_row_bytes(type, cols));
  prepare_activations_with(matmul_kernels_for_isa(type, Isa::kScalar), type, x.data(), cols, cols, 0, m, p.act.data());
  return p;
}

// y (m x rows, canaries outside [n_begin, n_end)) from `kernel` in one call.
std::vector<float> run(MatmulKernelFn kernel, const Problem& p, const uint8_t* act, int64_t m, int64_t n_begin,
                       int64_t n_end) {
  const WeightMatrix& w = p.packed.matrix();
  std::vector<float> y(static_cast<size_t>(m * w.rows), -12345.0f);
  MatmulTask t;
  t.weights = w.data;
  t.weight_row_bytes = layout_group_stride(w);
  t.cols = w.cols;
  t.act = act;
  t.act_row_bytes = activation_row_bytes(w.type, w.cols);
  t.m = m;
  t.y = y.data();
  t.y_stride = w.rows;
  t.n_begin = n_begin;
  t.n_end = n_end;
  kernel(t);
  return y;
}

// The tile driver `pick` selects against the vector kernel, bit for bit.
void expect_same_as_vector(MatmulKernelFn Layout::*pick) {
  for (const Layout& l : kLayouts) {
    const std::string name(layout_name(l.layout));
    for (const int64_t rows : {16, 37}) {
      for (const int64_t cols : cols_for(l.layout)) {
        for (const int64_t m : {16, 21, 32, 48, 64, 79, 80, 112}) {
          const Problem p = make_problem(l.layout, m, rows, cols, static_cast<uint32_t>(m * 100 + cols + rows));
          for (const auto& [lo, hi] : {std::pair<int64_t, int64_t>{0, rows}, {5, 22}, {13, 14}, {16, rows}}) {
            if (hi > rows) continue;
            const std::vector<float> want = run(l.vector, p, p.act.data(), m, lo, hi);
            const std::vector<float> got = run(l.*pick, p, p.act.data(), m, lo, hi);
            EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
                << name << " m=" << m << " rows=" << rows << " cols=" << cols << " n=[" << lo << "," << hi << ")";
          }
        }
      }
    }
  }
}

TEST(AmxMatmul, TheEmulatedTileDriverMatchesTheVectorKernelBitForBit) {
  if (!isa_supported(detect_cpu_features(), Isa::kAvx512)) GTEST_SKIP() << "this CPU lacks AVX-512";
  expect_same_as_vector(&Layout::emulated);
}

TEST(AmxMatmul, TheTileInstructionsMatchTheVectorKernelBitForBit) {
  if (!isa_supported(detect_cpu_features(), Isa::kAmx)) {
    GTEST_SKIP() << "this CPU (or its kernel) offers no AMX tiles: the tile instructions are not run here; "
                    "their driver is checked on the emulation above";
  }
  expect_same_as_vector(&Layout::amx);
}

TEST(AmxMatmul, ARowIsTheSameAloneAsInABatchOfTiles) {
  if (!isa_supported(detect_cpu_features(), Isa::kAvx512)) GTEST_SKIP() << "this CPU lacks AVX-512";
  const bool real = isa_supported(detect_cpu_features(), Isa::kAmx);
  for (const Layout& l : kLayouts) {
    constexpr int64_t kM = 53, kRows = 37;
    const int64_t cols = k_quant(l.layout) ? 512 : 160;
    const Problem p = make_problem(l.layout, kM, kRows, cols, 77);
    const MatmulKernelFn tiles = real ? l.amx : l.emulated;
    const std::vector<float> batch = run(tiles, p, p.act.data(), kM, 0, kRows);
    const size_t act_row = activation_row_bytes(packed_type(l.layout), cols);
    for (int64_t i = 0; i < kM; ++i) {
      const std::vector<float> alone = run(tiles, p, p.act.data() + i * act_row, 1, 0, kRows);
      EXPECT_EQ(std::memcmp(alone.data(), batch.data() + i * kRows, kRows * sizeof(float)), 0)
          << layout_name(l.layout) << " row " << i;
    }
  }
}

TEST(AmxMatmul, TheAmxTierRunsTheTileKernels) {
  // The "amx" tier is never the AVX-512 kernels under another name: for
  // these layouts it provides kernels of its own.
  for (const Layout& l : kLayouts) {
    EXPECT_EQ(matmul_kernels_for_isa(packed_type(l.layout), Isa::kAmx).matmul_packed, l.amx) << layout_name(l.layout);
  }
}

}  // namespace
}  // namespace met::cpu
