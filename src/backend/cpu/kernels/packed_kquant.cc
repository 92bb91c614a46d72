// Packing of the K-quant layouts (packed_kquant.h): each super-block of 16
// rows becomes one unit whose codes are interleaved 4 bytes per row per
// 64-byte line and whose scales are unpacked to bytes (Q4_K's 12-byte 6-bit
// packing and Q3_K's and IQ4_XS's split 6-bit scales are bijections, so
// unpacking re-packs them exactly).
// Threading: pure functions. Tested by tests/backend/packed_weights_test.cc.
#include "backend/cpu/kernels/packed_kquant.h"

#include <cstring>
#include <type_traits>

#include "backend/cpu/kernels/kquant_x16_layout.h"
#include "tensor/block_types.h"
#include "tensor/reference/k_scales.h"

namespace met::cpu {
namespace {

using kx16::kLine;
using kx16::kRows;

constexpr size_t kKx16Quad = 4;

// Copies `lines` quads of row r: src[4j .. 4j + 3] to unit[64j + 4r].
void interleave_quads(const uint8_t* src, int lines, int r, uint8_t* unit) {
  for (int j = 0; j < lines; ++j) {
    const size_t at = static_cast<size_t>(j) * kLine + kKx16Quad * static_cast<size_t>(r);
    std::memcpy(unit + at, src + kKx16Quad * j, kKx16Quad);
  }
}

// The inverse: unit[64j + 4r] to dst[4j .. 4j + 3].
void gather_quads(const uint8_t* unit, int lines, int r, uint8_t* dst) {
  for (int j = 0; j < lines; ++j) {
    const size_t at = static_cast<size_t>(j) * kLine + kKx16Quad * static_cast<size_t>(r);
    std::memcpy(dst + kKx16Quad * j, unit + at, kKx16Quad);
  }
}

// Row n of `w`'s row-major bytes, or null for a padding row.
const uint8_t* kx16_source_row(const WeightMatrix& w, int64_t n) {
  return n < w.rows ? w.data + static_cast<size_t>(n) * w.row_bytes : nullptr;
}

// Where a Q4_K or Q5_K unit keeps its fields (kquant_x16_layout.h).
struct ScaleMinUnit {
  size_t codes, qh, scales, mins, d, dmin;
};
constexpr ScaleMinUnit kQ4_KFields{kx16::kQ4_KCodes, 0, kx16::kQ4_KScales, kx16::kQ4_KMins, kx16::kQ4_KD,
                                   kx16::kQ4_KDmin};
constexpr ScaleMinUnit kQ5_KFields{kx16::kQ5_KCodes, kx16::kQ5_KQh, kx16::kQ5_KScales, kx16::kQ5_KMins,
                                   kx16::kQ5_KD, kx16::kQ5_KDmin};

template <class Block, const ScaleMinUnit& kUnit>
void pack_scale_min_block(const Block& block, int r, uint8_t* unit) {
  interleave_quads(block.qs, 32, r, unit + kUnit.codes);
  if constexpr (std::is_same_v<Block, BlockQ5_K>) interleave_quads(block.qh, 8, r, unit + kUnit.qh);
  for (int s = 0; s < 8; ++s) {
    const met::ref::ScaleMin sm = met::ref::unpack_k4_scale_min(block.scales, s);
    unit[kUnit.scales + 16 * static_cast<size_t>(s) + static_cast<size_t>(r)] = sm.scale;
    unit[kUnit.mins + 16 * static_cast<size_t>(s) + static_cast<size_t>(r)] = sm.min;
  }
  std::memcpy(unit + kUnit.d + 2 * static_cast<size_t>(r), &block.d, sizeof(uint16_t));
  std::memcpy(unit + kUnit.dmin + 2 * static_cast<size_t>(r), &block.dmin, sizeof(uint16_t));
}

template <class Block, const ScaleMinUnit& kUnit>
void unpack_scale_min_block(const uint8_t* unit, int r, Block& block) {
  gather_quads(unit + kUnit.codes, 32, r, block.qs);
  if constexpr (std::is_same_v<Block, BlockQ5_K>) gather_quads(unit + kUnit.qh, 8, r, block.qh);
  uint8_t scales[8], mins[8];
  for (int s = 0; s < 8; ++s) {
    scales[s] = unit[kUnit.scales + 16 * static_cast<size_t>(s) + static_cast<size_t>(r)];
    mins[s] = unit[kUnit.mins + 16 * static_cast<size_t>(s) + static_cast<size_t>(r)];
  }
  met::ref::pack_k4_scale_mins(scales, mins, block.scales);
  std::memcpy(&block.d, unit + kUnit.d + 2 * static_cast<size_t>(r), sizeof(uint16_t));
  std::memcpy(&block.dmin, unit + kUnit.dmin + 2 * static_cast<size_t>(r), sizeof(uint16_t));
}

// Scale g of a Q6_K row r sits at byte 32 (g / 2) + 2r + g % 2.
size_t q6_k_scale_offset(int g, int r) {
  return kx16::kQ6_KScales + 32 * static_cast<size_t>(g / 2) + 2 * static_cast<size_t>(r) + g % 2;
}

void pack_q6_k_block(const BlockQ6_K& block, int r, uint8_t* unit) {
  interleave_quads(block.ql, 32, r, unit + kx16::kQ6_KQl);
  interleave_quads(block.qh, 16, r, unit + kx16::kQ6_KQh);
  for (int g = 0; g < 16; ++g) std::memcpy(unit + q6_k_scale_offset(g, r), &block.scales[g], 1);
  std::memcpy(unit + kx16::kQ6_KD + 2 * static_cast<size_t>(r), &block.d, sizeof(uint16_t));
}

void unpack_q6_k_block(const uint8_t* unit, int r, BlockQ6_K& block) {
  gather_quads(unit + kx16::kQ6_KQl, 32, r, block.ql);
  gather_quads(unit + kx16::kQ6_KQh, 16, r, block.qh);
  for (int g = 0; g < 16; ++g) std::memcpy(&block.scales[g], unit + q6_k_scale_offset(g, r), 1);
  std::memcpy(&block.d, unit + kx16::kQ6_KD + 2 * static_cast<size_t>(r), sizeof(uint16_t));
}

// IQ4_XS group g's 6-bit scale: its low 4 bits in nibble g % 2 of
// scales_l[g / 2], its top 2 in bits 2g, 2g + 1 of scales_h.
int iq4_xs_scale(const BlockIq4Xs& block, int g) {
  return ((block.scales_l[g / 2] >> (4 * (g % 2))) & 0x0F) | (((block.scales_h >> (2 * g)) & 3) << 4);
}

void pack_iq4_xs_block(const BlockIq4Xs& block, int r, uint8_t* unit) {
  interleave_quads(block.qs, 32, r, unit + kx16::kIq4XsCodes);
  for (int g = 0; g < 8; ++g) {
    unit[kx16::kIq4XsScales + 16 * static_cast<size_t>(g) + static_cast<size_t>(r)] =
        static_cast<uint8_t>(static_cast<int8_t>(iq4_xs_scale(block, g) - 32));
  }
  std::memcpy(unit + kx16::kIq4XsD + 2 * static_cast<size_t>(r), &block.d, sizeof(uint16_t));
}

void unpack_iq4_xs_block(const uint8_t* unit, int r, BlockIq4Xs& block) {
  gather_quads(unit + kx16::kIq4XsCodes, 32, r, block.qs);
  block.scales_h = 0;
  std::memset(block.scales_l, 0, sizeof(block.scales_l));
  for (int g = 0; g < 8; ++g) {
    const size_t at = kx16::kIq4XsScales + 16 * static_cast<size_t>(g) + static_cast<size_t>(r);
    const int ls = static_cast<int8_t>(unit[at]) + 32;
    block.scales_l[g / 2] = static_cast<uint8_t>(block.scales_l[g / 2] | (ls & 0x0F) << (4 * (g % 2)));
    block.scales_h = static_cast<uint16_t>(block.scales_h | (ls >> 4) << (2 * g));
  }
  std::memcpy(&block.d, unit + kx16::kIq4XsD + 2 * static_cast<size_t>(r), sizeof(uint16_t));
}

// Scale g of a Q3_K row r sits at byte 32 (g / 2) + 2r + g % 2.
size_t q3_k_scale_offset(int g, int r) {
  return kx16::kQ3_KScales + 32 * static_cast<size_t>(g / 2) + 2 * static_cast<size_t>(r) + g % 2;
}

void pack_q3_k_block(const BlockQ3_K& block, int r, uint8_t* unit) {
  interleave_quads(block.qs, 16, r, unit + kx16::kQ3_KQs);
  interleave_quads(block.hmask, 8, r, unit + kx16::kQ3_KHmask);
  for (int g = 0; g < 16; ++g) {
    const auto scale = static_cast<int8_t>(met::ref::unpack_q3_k_scale(block.scales, g));  // -32 .. 31
    unit[q3_k_scale_offset(g, r)] = static_cast<uint8_t>(scale);
  }
  std::memcpy(unit + kx16::kQ3_KD + 2 * static_cast<size_t>(r), &block.d, sizeof(uint16_t));
}

void unpack_q3_k_block(const uint8_t* unit, int r, BlockQ3_K& block) {
  gather_quads(unit + kx16::kQ3_KQs, 16, r, block.qs);
  gather_quads(unit + kx16::kQ3_KHmask, 8, r, block.hmask);
  uint8_t stored[16];
  for (int g = 0; g < 16; ++g) {
    stored[g] = static_cast<uint8_t>(static_cast<int8_t>(unit[q3_k_scale_offset(g, r)]) + 32);
  }
  met::ref::pack_q3_k_scales(stored, block.scales);
  std::memcpy(&block.d, unit + kx16::kQ3_KD + 2 * static_cast<size_t>(r), sizeof(uint16_t));
}

// Group g's byte of a Q2_K row r sits at byte 32 (g / 2) + 2r + g % 2.
size_t q2_k_scale_offset(int g, int r) {
  return kx16::kQ2_KScales + 32 * static_cast<size_t>(g / 2) + 2 * static_cast<size_t>(r) + g % 2;
}

void pack_q2_k_block(const BlockQ2_K& block, int r, uint8_t* unit) {
  interleave_quads(block.qs, 16, r, unit + kx16::kQ2_KQs);
  for (int g = 0; g < 16; ++g) unit[q2_k_scale_offset(g, r)] = block.scales[g];
  std::memcpy(unit + kx16::kQ2_KD + 2 * static_cast<size_t>(r), &block.d, sizeof(uint16_t));
  std::memcpy(unit + kx16::kQ2_KDmin + 2 * static_cast<size_t>(r), &block.dmin, sizeof(uint16_t));
}

void unpack_q2_k_block(const uint8_t* unit, int r, BlockQ2_K& block) {
  gather_quads(unit + kx16::kQ2_KQs, 16, r, block.qs);
  for (int g = 0; g < 16; ++g) block.scales[g] = unit[q2_k_scale_offset(g, r)];
  std::memcpy(&block.d, unit + kx16::kQ2_KD + 2 * static_cast<size_t>(r), sizeof(uint16_t));
  std::memcpy(&block.dmin, unit + kx16::kQ2_KDmin + 2 * static_cast<size_t>(r), sizeof(uint16_t));
}

template <class Block, size_t kUnitBytes, void (*kPack)(const Block&, int, uint8_t*)>
void pack_kx16_group(const WeightMatrix& w, int64_t g, uint8_t* group) {
  const int64_t num_blocks = w.cols / kQkK;
  for (int r = 0; r < kRows; ++r) {
    const uint8_t* row = kx16_source_row(w, g * kRows + r);
    if (row == nullptr) break;
    for (int64_t b = 0; b < num_blocks; ++b) {
      Block block;
      std::memcpy(&block, row + static_cast<size_t>(b) * sizeof(Block), sizeof(Block));
      kPack(block, r, group + static_cast<size_t>(b) * kUnitBytes);
    }
  }
}

template <class Block, size_t kUnitBytes, void (*kUnpack)(const uint8_t*, int, Block&)>
void unpack_kx16_row(const WeightMatrix& w, int64_t n, uint8_t* out) {
  const int64_t num_blocks = w.cols / kQkK;
  const uint8_t* group = w.data + static_cast<size_t>(n / kRows) * static_cast<size_t>(num_blocks) * kUnitBytes;
  for (int64_t b = 0; b < num_blocks; ++b) {
    Block block;
    kUnpack(group + static_cast<size_t>(b) * kUnitBytes, static_cast<int>(n % kRows), block);
    std::memcpy(out + static_cast<size_t>(b) * sizeof(Block), &block, sizeof(Block));
  }
}

}  // namespace

size_t q4_kx16_group_bytes(int64_t cols) { return static_cast<size_t>(cols / kQkK) * kx16::kQ4_KUnitBytes; }

size_t q5_kx16_group_bytes(int64_t cols) { return static_cast<size_t>(cols / kQkK) * kx16::kQ5_KUnitBytes; }

size_t q6_kx16_group_bytes(int64_t cols) { return static_cast<size_t>(cols / kQkK) * kx16::kQ6_KUnitBytes; }

size_t iq4_xsx16_group_bytes(int64_t cols) { return static_cast<size_t>(cols / kQkK) * kx16::kIq4XsUnitBytes; }

size_t q3_kx16_group_bytes(int64_t cols) { return static_cast<size_t>(cols / kQkK) * kx16::kQ3_KUnitBytes; }

size_t q2_kx16_group_bytes(int64_t cols) { return static_cast<size_t>(cols / kQkK) * kx16::kQ2_KUnitBytes; }

void pack_q4_kx16_group(const WeightMatrix& w, int64_t g, uint8_t* group) {
  pack_kx16_group<BlockQ4_K, kx16::kQ4_KUnitBytes, pack_scale_min_block<BlockQ4_K, kQ4_KFields>>(w, g, group);
}

void pack_q5_kx16_group(const WeightMatrix& w, int64_t g, uint8_t* group) {
  pack_kx16_group<BlockQ5_K, kx16::kQ5_KUnitBytes, pack_scale_min_block<BlockQ5_K, kQ5_KFields>>(w, g, group);
}

void pack_q6_kx16_group(const WeightMatrix& w, int64_t g, uint8_t* group) {
  pack_kx16_group<BlockQ6_K, kx16::kQ6_KUnitBytes, pack_q6_k_block>(w, g, group);
}

void pack_iq4_xsx16_group(const WeightMatrix& w, int64_t g, uint8_t* group) {
  pack_kx16_group<BlockIq4Xs, kx16::kIq4XsUnitBytes, pack_iq4_xs_block>(w, g, group);
}

void pack_q3_kx16_group(const WeightMatrix& w, int64_t g, uint8_t* group) {
  pack_kx16_group<BlockQ3_K, kx16::kQ3_KUnitBytes, pack_q3_k_block>(w, g, group);
}

void pack_q2_kx16_group(const WeightMatrix& w, int64_t g, uint8_t* group) {
  pack_kx16_group<BlockQ2_K, kx16::kQ2_KUnitBytes, pack_q2_k_block>(w, g, group);
}

void unpack_q4_kx16_row(const WeightMatrix& w, int64_t n, uint8_t* out) {
  unpack_kx16_row<BlockQ4_K, kx16::kQ4_KUnitBytes, unpack_scale_min_block<BlockQ4_K, kQ4_KFields>>(w, n, out);
}

void unpack_q5_kx16_row(const WeightMatrix& w, int64_t n, uint8_t* out) {
  unpack_kx16_row<BlockQ5_K, kx16::kQ5_KUnitBytes, unpack_scale_min_block<BlockQ5_K, kQ5_KFields>>(w, n, out);
}

void unpack_q6_kx16_row(const WeightMatrix& w, int64_t n, uint8_t* out) {
  unpack_kx16_row<BlockQ6_K, kx16::kQ6_KUnitBytes, unpack_q6_k_block>(w, n, out);
}

void unpack_iq4_xsx16_row(const WeightMatrix& w, int64_t n, uint8_t* out) {
  unpack_kx16_row<BlockIq4Xs, kx16::kIq4XsUnitBytes, unpack_iq4_xs_block>(w, n, out);
}

void unpack_q3_kx16_row(const WeightMatrix& w, int64_t n, uint8_t* out) {
  unpack_kx16_row<BlockQ3_K, kx16::kQ3_KUnitBytes, unpack_q3_k_block>(w, n, out);
}

void unpack_q2_kx16_row(const WeightMatrix& w, int64_t n, uint8_t* out) {
  unpack_kx16_row<BlockQ2_K, kx16::kQ2_KUnitBytes, unpack_q2_k_block>(w, n, out);
}

}  // namespace met::cpu
