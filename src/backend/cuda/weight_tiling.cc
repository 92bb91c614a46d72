// Weight tiling at load (see weight_tiling.h).
#include "backend/cuda/weight_tiling.h"

#include <algorithm>

#include "backend/cuda/dequant_hd.h"
#include "core/check.h"

namespace met::cuda {

bool can_tile_q8_0(int64_t cols) { return cols > 0 && cols % kHdQ8TileCols == 0; }

void tile_q8_0_rows(std::span<const uint8_t> raw, int64_t cols, std::span<uint8_t> out) {
  MET_CHECK(can_tile_q8_0(cols));
  MET_CHECK(raw.size() == out.size());
  constexpr int kBlocks = kHdQ8TileCols / kHdQk;
  const size_t tiles = raw.size() / kHdQ8TileBytes;  // a tile is 16 blocks of 34 bytes
  MET_CHECK(tiles * kHdQ8TileBytes == raw.size());
  for (size_t t = 0; t < tiles; ++t) {
    const uint8_t* src = raw.data() + t * kHdQ8TileBytes;
    uint8_t* dst = out.data() + t * kHdQ8TileBytes;
    for (int b = 0; b < kBlocks; ++b) {
      const uint8_t* block = src + b * kHdQ8_0Bytes;
      uint8_t* scale = dst + kHdQ8TileCols + 2 * hd_q8_tile_scale_slot(b);
      scale[0] = block[0];
      scale[1] = block[1];
      for (int j = 0; j < kHdQk; ++j) dst[hd_q8_tile_byte(b * kHdQk + j)] = block[2 + j];
    }
  }
}

bool can_tile_k_quant(int64_t cols) { return cols > 0 && cols % kHdKTileCols == 0; }

int64_t q4_k_tiled_row_bytes(int64_t cols) { return cols / kHdKTileCols * kHdQ4KTileBytes; }
int64_t q6_k_tiled_row_bytes(int64_t cols) { return cols / kHdKTileCols * kHdQ6KTileBytes; }

namespace {

constexpr int kSuperBlocks = kHdKTileCols / kHdQkK;  // a tile's

// Element j (< 256) of a Q4_K super-block: its 4-bit code.
int q4_k_code(const uint8_t* block, int j) {
  const int group = j / 32;
  const uint8_t byte = block[16 + 32 * (group / 2) + j % 32];
  return group % 2 == 0 ? (byte & 0x0F) : (byte >> 4);
}

// Element j (< 256) of a Q6_K super-block: its 6-bit code (q + 32).
int q6_k_code(const uint8_t* block, int j) {
  const int half = j / 128, k = (j % 128) / 32, l = j % 32;
  const int nibble = (block[64 * half + l + 32 * (k % 2)] >> (4 * (k / 2))) & 0x0F;
  return nibble | (((block[128 + 32 * half + l] >> (2 * k)) & 3) << 4);
}

// Column c's code into lane order; `high` (Q6_K) takes its bits 4 and 5.
void place_code(uint8_t* tile, int c, int code, uint8_t* high) {
  const int lane = hd_k_tile_lane(c), e = hd_k_tile_element(c);
  tile[16 * lane + e / 2] = static_cast<uint8_t>(tile[16 * lane + e / 2] | ((code & 0x0F) << (4 * (e % 2))));
  if (high != nullptr) {
    uint8_t& byte = high[8 * lane + e / 4];
    byte = static_cast<uint8_t>(byte | ((code >> 4) << (2 * (e % 4))));
  }
}

}  // namespace

void tile_q4_k_rows(std::span<const uint8_t> raw, int64_t cols, std::span<uint8_t> out) {
  MET_CHECK(can_tile_k_quant(cols));
  const size_t tiles = raw.size() / (kSuperBlocks * kHdQ4KBytes);
  MET_CHECK(tiles * kSuperBlocks * kHdQ4KBytes == raw.size() && out.size() == tiles * kHdQ4KTileBytes);
  std::fill(out.begin(), out.end(), uint8_t{0});
  for (size_t t = 0; t < tiles; ++t) {
    const uint8_t* src = raw.data() + t * kSuperBlocks * kHdQ4KBytes;
    uint8_t* dst = out.data() + t * kHdQ4KTileBytes;
    for (int c = 0; c < kHdKTileCols; ++c) {
      place_code(dst, c, q4_k_code(src + (c / kHdQkK) * kHdQ4KBytes, c % kHdQkK), nullptr);
    }
    for (int g = 0; g < 4; ++g) {  // lane group l / 8
      for (int m = 0; m < 8; ++m) {
        const HdScaleMin sm = hd_k4_scale_min(src + (m / 2) * kHdQ4KBytes + 4, 4 * (m % 2) + g);
        dst[512 + 16 * g + m] = static_cast<uint8_t>(sm.scale);
        dst[512 + 16 * g + 8 + m] = static_cast<uint8_t>(sm.min);
      }
    }
    for (int s = 0; s < kSuperBlocks; ++s) std::copy_n(src + s * kHdQ4KBytes, 4, dst + 576 + 4 * s);
  }
}

void tile_q6_k_rows(std::span<const uint8_t> raw, int64_t cols, std::span<uint8_t> out) {
  MET_CHECK(can_tile_k_quant(cols));
  const size_t tiles = raw.size() / (kSuperBlocks * kHdQ6KBytes);
  MET_CHECK(tiles * kSuperBlocks * kHdQ6KBytes == raw.size() && out.size() == tiles * kHdQ6KTileBytes);
  std::fill(out.begin(), out.end(), uint8_t{0});
  for (size_t t = 0; t < tiles; ++t) {
    const uint8_t* src = raw.data() + t * kSuperBlocks * kHdQ6KBytes;
    uint8_t* dst = out.data() + t * kHdQ6KTileBytes;
    for (int c = 0; c < kHdKTileCols; ++c) {
      place_code(dst, c, q6_k_code(src + (c / kHdQkK) * kHdQ6KBytes, c % kHdQkK), dst + 512);
    }
    for (int g = 0; g < 8; ++g) {  // lane group l / 4
      for (int m = 0; m < 8; ++m) dst[768 + 8 * g + m] = src[(m / 2) * kHdQ6KBytes + 192 + 8 * (m % 2) + g];
    }
    for (int s = 0; s < kSuperBlocks; ++s) std::copy_n(src + s * kHdQ6KBytes + 208, 2, dst + 832 + 2 * s);
  }
}

}  // namespace met::cuda
