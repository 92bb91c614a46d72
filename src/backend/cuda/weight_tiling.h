// Weight layouts the grid backends' GEMV reads faster than GGUF's, made
// once at load (GridDevice::upload_matrix): Q8_0, Q4_K and Q6_K rows tiled
// so a warp's loads of weights and of activations are contiguous, and a
// K-quant's scales come in loads whose bytes each lane knows at compile
// time (the layouts are dequant_hd.h's kQ8_0Tiled, kQ4_KTiled,
// kQ6_KTiled). Every element decodes to the file's value (weight_element
// gives the same float), so tiling changes no result.
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

// Whether rows of `cols` Q4_K or Q6_K columns tile (whole 1024-column tiles).
bool can_tile_k_quant(int64_t cols);

// Bytes of a tiled Q4_K or Q6_K row of `cols` columns (Q8_0 keeps the
// file's).
int64_t q4_k_tiled_row_bytes(int64_t cols);
int64_t q6_k_tiled_row_bytes(int64_t cols);

// `raw`: rows of GGUF Q4_K (cols / 256 super-blocks of 144 bytes each) into
// `out`, q4_k_tiled_row_bytes(cols) a row.
// REQUIRES: can_tile_k_quant(cols); whole rows on both sides.
void tile_q4_k_rows(std::span<const uint8_t> raw, int64_t cols, std::span<uint8_t> out);

// `raw`: rows of GGUF Q6_K (super-blocks of 210 bytes) into `out`,
// q6_k_tiled_row_bytes(cols) a row.
// REQUIRES: can_tile_k_quant(cols); whole rows on both sides.
void tile_q6_k_rows(std::span<const uint8_t> raw, int64_t cols, std::span<uint8_t> out);

}  // namespace met::cuda
