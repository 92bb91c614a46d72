// Weight layouts the grid backends' GEMV reads faster than GGUF's, made
// once at load (GridDevice::upload_matrix): Q8_0 rows tiled so a warp's
// loads of weights and of activations are contiguous (the layout is
// dequant_hd.h's kQ8_0Tiled). Every element decodes to the file's value
// (weight_element gives the same float), so tiling changes no result.
// Threading: pure functions. Tested by tests/backend/cuda_math_test.cc.
#pragma once

#include <cstdint>
#include <span>

namespace met::cuda {

// Whether rows of `cols` Q8_0 columns tile (whole 512-column tiles).
bool can_tile_q8_0(int64_t cols);

// `raw`: rows of GGUF Q8_0 (cols / 32 blocks of 34 bytes each) into `out`,
// the same size, tiled.
// REQUIRES: can_tile_q8_0(cols); raw.size() == out.size(), a whole number
// of rows.
void tile_q8_0_rows(std::span<const uint8_t> raw, int64_t cols, std::span<uint8_t> out);

}  // namespace met::cuda
