// Weight tiling at load (see weight_tiling.h).
#include "backend/cuda/weight_tiling.h"

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

}  // namespace met::cuda
