// Packed weight layouts (see packed_weights.h): plain scalar copies, run once
// per matrix at load. Tested by tests/backend/packed_weights_test.cc.
#include "backend/cpu/kernels/packed_weights.h"

#include <algorithm>
#include <cstring>

#include "backend/cpu/kernels/matmul_dispatch.h"
#include "backend/cpu/kernels/packed_kquant.h"
#include "core/check.h"
#include "tensor/block_types.h"

namespace met::cpu {
namespace {

constexpr size_t kQuadBytes = 4;
constexpr size_t kBlockCodeBytes = kQ8_0x16Rows * kQk;           // 512
constexpr size_t kPairBytes = 2 * kBlockCodeBytes + 64;          // codes of 2 blocks, 32 scales
constexpr size_t kSingleBytes = kBlockCodeBytes + 64;            // codes, 16 scales, padding
constexpr size_t kScaleBytes = kQ8_0x16Rows * sizeof(uint16_t);  // 32
constexpr uint8_t kCodeOffset = 0x80;

// Where block b of a Q8_0x16 group starts, and where its 16 scales are.
size_t block_offset(int64_t b) { return static_cast<size_t>(b / 2) * kPairBytes + (b % 2) * kBlockCodeBytes; }
size_t scales_offset(int64_t b, int64_t num_blocks) {
  const size_t unit = static_cast<size_t>(b / 2) * kPairBytes;
  const bool single = b + 1 == num_blocks && num_blocks % 2 == 1;
  return unit + (single ? kBlockCodeBytes : 2 * kBlockCodeBytes + (b % 2) * kScaleBytes);
}

// Packs group g of row-major Q8_0 `w` into `group` (zeroed beforehand).
void pack_q8_0x16_group(const WeightMatrix& w, int64_t g, uint8_t* group) {
  const int64_t num_blocks = w.cols / kQk;
  for (int r = 0; r < kQ8_0x16Rows; ++r) {
    const int64_t n = g * kQ8_0x16Rows + r;
    const bool padding = n >= w.rows;
    const auto* blocks =
        reinterpret_cast<const BlockQ8_0*>(w.data + static_cast<size_t>(padding ? 0 : n) * w.row_bytes);
    for (int64_t b = 0; b < num_blocks; ++b) {
      uint8_t* codes = group + block_offset(b) + static_cast<size_t>(r) * kQuadBytes;
      for (int j = 0; j < kQk / 4; ++j) {  // quad j of row r: 4 codes, each offset by +128
        uint32_t quad = 0;
        if (!padding) std::memcpy(&quad, blocks[b].qs + 4 * j, sizeof(quad));
        quad ^= 0x80808080u;
        std::memcpy(codes + static_cast<size_t>(j) * 64, &quad, sizeof(quad));
      }
      const uint16_t d = padding ? 0 : blocks[b].d;
      std::memcpy(group + scales_offset(b, num_blocks) + sizeof(uint16_t) * r, &d, sizeof(d));
    }
  }
}

void unpack_q8_0x16_row(const WeightMatrix& w, int64_t n, uint8_t* out) {
  const int64_t num_blocks = w.cols / kQk;
  const uint8_t* group = w.data + static_cast<size_t>(n / kQ8_0x16Rows) * q8_0x16_group_bytes(w.cols);
  const auto r = static_cast<size_t>(n % kQ8_0x16Rows);
  auto* blocks = reinterpret_cast<BlockQ8_0*>(out);
  for (int64_t b = 0; b < num_blocks; ++b) {
    const uint8_t* codes = group + block_offset(b);
    for (int k = 0; k < kQk; ++k) {
      const uint8_t code = codes[static_cast<size_t>(k / 4) * 64 + r * kQuadBytes + k % 4];
      blocks[b].qs[k] = static_cast<int8_t>(code ^ kCodeOffset);
    }
    std::memcpy(&blocks[b].d, group + scales_offset(b, num_blocks) + sizeof(uint16_t) * r, sizeof(uint16_t));
  }
}

// The 4-bit layouts packed 16 rows at a time (Mxfp4x16, Iq4NlX16, Q4_0x16,
// Q5_0x16, Q4_1x16, Q5_1x16): blocks in units of four, each unit the
// blocks' nibbles, then their `extra_bytes` of fifth bits a row (Q5_0's and
// Q5_1's qh; none for the others), then 16 scales per block of
// `scale_bytes` each (MXFP4's E8M0 byte, Q4_1's and Q5_1's fp16 d and m, the
// others' fp16 d). A GGUF block is its scale, its extra bytes, then its 16
// bytes of nibbles (BlockMxfp4, BlockIq4Nl, BlockQ4_0, BlockQ5_0, BlockQ4_1,
// BlockQ5_1).
constexpr int64_t kNibbleUnitBlocks = 4;
constexpr size_t kNibbleBlockBytes = kMxfp4x16Rows * kQk / 2;  // 256
constexpr size_t kNibbleQsBytes = kQk / 2;
static_assert(kMxfp4x16Rows == kIq4NlX16Rows);

struct NibbleShape {
  size_t scale_bytes = 2;
  size_t extra_bytes = 0;
};

NibbleShape nibble_shape_of(GgmlType type) {
  if (type == GgmlType::kMXFP4) return {1, 0};
  if (type == GgmlType::kQ5_0) return {2, 4};
  if (type == GgmlType::kQ4_1) return {4, 0};  // d and m
  if (type == GgmlType::kQ5_1) return {4, 4};
  return {2, 0};
}
// A block's bytes in a unit before the scales (its nibbles and extras).
size_t nibble_block_span(NibbleShape s) { return kNibbleBlockBytes + kMxfp4x16Rows * s.extra_bytes; }
size_t nibble_scales_bytes(NibbleShape s) { return 64 * s.scale_bytes; }  // 16 rows x 4 blocks
size_t nibble_unit_bytes(NibbleShape s) { return kNibbleUnitBlocks * nibble_block_span(s) + nibble_scales_bytes(s); }

struct NibbleBlockAt {
  size_t nibbles, extras, scales;  // offsets in the group of block b's fields (row 0)
};

NibbleBlockAt nibble_block_at(int64_t b, int64_t num_blocks, NibbleShape s) {
  const int64_t unit_begin = b / kNibbleUnitBlocks * kNibbleUnitBlocks;
  const auto unit_blocks = static_cast<size_t>(std::min(kNibbleUnitBlocks, num_blocks - unit_begin));
  const size_t unit = static_cast<size_t>(b / kNibbleUnitBlocks) * nibble_unit_bytes(s);
  const auto k = static_cast<size_t>(b % kNibbleUnitBlocks);
  return {unit + k * kNibbleBlockBytes, unit + unit_blocks * kNibbleBlockBytes + k * kMxfp4x16Rows * s.extra_bytes,
          unit + unit_blocks * nibble_block_span(s) + k * kMxfp4x16Rows * s.scale_bytes};
}

size_t nibble_x16_group_bytes(int64_t cols, NibbleShape s) {
  const int64_t num_blocks = cols / kQk;
  const int64_t tail_blocks = num_blocks % kNibbleUnitBlocks;
  const size_t tail =
      tail_blocks == 0 ? 0 : static_cast<size_t>(tail_blocks) * nibble_block_span(s) + nibble_scales_bytes(s);
  return static_cast<size_t>(num_blocks / kNibbleUnitBlocks) * nibble_unit_bytes(s) + tail;
}

// Packs group g of row-major MXFP4, IQ4_NL, Q4_0, Q5_0, Q4_1 or Q5_1 `w` into `group`
// (zeroed beforehand: padding rows stay zero).
void pack_nibble_x16_group(const WeightMatrix& w, int64_t g, uint8_t* group) {
  const int64_t num_blocks = w.cols / kQk;
  const NibbleShape s = nibble_shape_of(w.type);
  const size_t block_bytes = s.scale_bytes + s.extra_bytes + kNibbleQsBytes;
  for (int r = 0; r < kMxfp4x16Rows; ++r) {
    const int64_t n = g * kMxfp4x16Rows + r;
    if (n >= w.rows) break;
    const uint8_t* row = w.data + static_cast<size_t>(n) * w.row_bytes;
    for (int64_t b = 0; b < num_blocks; ++b) {
      const uint8_t* block = row + static_cast<size_t>(b) * block_bytes;
      const NibbleBlockAt at = nibble_block_at(b, num_blocks, s);
      const auto rr = static_cast<size_t>(r);
      for (int j = 0; j < kQk / 8; ++j) {  // bytes 4j .. 4j+3 of row r's block
        std::memcpy(group + at.nibbles + static_cast<size_t>(j) * 64 + rr * kQuadBytes,
                    block + s.scale_bytes + s.extra_bytes + 4 * j, kQuadBytes);
      }
      std::memcpy(group + at.extras + rr * s.extra_bytes, block + s.scale_bytes, s.extra_bytes);
      std::memcpy(group + at.scales + rr * s.scale_bytes, block, s.scale_bytes);
    }
  }
}

void unpack_nibble_x16_row(const WeightMatrix& w, int64_t n, uint8_t* out) {
  const int64_t num_blocks = w.cols / kQk;
  const NibbleShape s = nibble_shape_of(w.type);
  const size_t block_bytes = s.scale_bytes + s.extra_bytes + kNibbleQsBytes;
  const uint8_t* group = w.data + static_cast<size_t>(n / kMxfp4x16Rows) * nibble_x16_group_bytes(w.cols, s);
  const auto r = static_cast<size_t>(n % kMxfp4x16Rows);
  for (int64_t b = 0; b < num_blocks; ++b) {
    uint8_t* block = out + static_cast<size_t>(b) * block_bytes;
    const NibbleBlockAt at = nibble_block_at(b, num_blocks, s);
    for (int j = 0; j < kQk / 8; ++j) {
      std::memcpy(block + s.scale_bytes + s.extra_bytes + 4 * j,
                  group + at.nibbles + static_cast<size_t>(j) * 64 + r * kQuadBytes, kQuadBytes);
    }
    std::memcpy(block + s.scale_bytes, group + at.extras + r * s.extra_bytes, s.extra_bytes);
    std::memcpy(block, group + at.scales + r * s.scale_bytes, s.scale_bytes);
  }
}

// The float layouts packed 16 rows at a time (F16x16, Bf16x16): per step
// of `lane_elems` inputs (1 for F16, 2 for BF16), 16 rows x lane_elems
// 2-byte values in row order; a missing last input (odd cols, BF16) is 0.
int64_t lane_elems_of(WeightLayout layout) { return layout == WeightLayout::kBf16x16 ? 2 : 1; }

size_t float_x16_group_bytes(WeightLayout layout, int64_t cols) {
  const int64_t e = lane_elems_of(layout);
  return static_cast<size_t>((cols + e - 1) / e) * kF16x16Rows * static_cast<size_t>(e) * sizeof(uint16_t);
}

// Byte offset in a group of row r's input k.
size_t float_x16_offset(int64_t lane_elems, int64_t r, int64_t k) {
  return sizeof(uint16_t) * static_cast<size_t>((k / lane_elems * kF16x16Rows + r) * lane_elems + k % lane_elems);
}

void pack_float_x16_group(const WeightMatrix& w, WeightLayout layout, int64_t g, uint8_t* group) {
  const int64_t e = lane_elems_of(layout);
  for (int64_t r = 0; r < kF16x16Rows && g * kF16x16Rows + r < w.rows; ++r) {
    const uint8_t* row = w.data + static_cast<size_t>(g * kF16x16Rows + r) * w.row_bytes;
    for (int64_t k = 0; k < w.cols; ++k) {
      std::memcpy(group + float_x16_offset(e, r, k), row + sizeof(uint16_t) * static_cast<size_t>(k), 2);
    }
  }
}

void unpack_float_x16_row(const WeightMatrix& w, int64_t n, uint8_t* out) {
  const int64_t e = lane_elems_of(w.layout);
  const uint8_t* group = w.data + static_cast<size_t>(n / kF16x16Rows) * float_x16_group_bytes(w.layout, w.cols);
  for (int64_t k = 0; k < w.cols; ++k) {
    std::memcpy(out + sizeof(uint16_t) * static_cast<size_t>(k), group + float_x16_offset(e, n % kF16x16Rows, k), 2);
  }
}


// Bytes of one group of a packed layout.
size_t packed_group_bytes(WeightLayout layout, int64_t cols) {
  if (layout == WeightLayout::kQ8_0x16) return q8_0x16_group_bytes(cols);
  if (layout == WeightLayout::kF16x16 || layout == WeightLayout::kBf16x16) return float_x16_group_bytes(layout, cols);
  if (layout == WeightLayout::kQ4_Kx16) return q4_kx16_group_bytes(cols);
  if (layout == WeightLayout::kQ6_Kx16) return q6_kx16_group_bytes(cols);
  if (layout == WeightLayout::kQ5_Kx16) return q5_kx16_group_bytes(cols);
  if (layout == WeightLayout::kIq4XsX16) return iq4_xsx16_group_bytes(cols);
  if (layout == WeightLayout::kQ3_Kx16) return q3_kx16_group_bytes(cols);
  if (layout == WeightLayout::kQ2_Kx16) return q2_kx16_group_bytes(cols);
  if (layout == WeightLayout::kQ5_0x16) return q5_0x16_group_bytes(cols);
  if (layout == WeightLayout::kQ4_1x16) return nibble_x16_group_bytes(cols, nibble_shape_of(GgmlType::kQ4_1));
  if (layout == WeightLayout::kQ5_1x16) return nibble_x16_group_bytes(cols, nibble_shape_of(GgmlType::kQ5_1));
  return layout == WeightLayout::kMxfp4x16 ? mxfp4x16_group_bytes(cols) : iq4_nlx16_group_bytes(cols);
}

}  // namespace

GgmlType packed_type(WeightLayout layout) {
  switch (layout) {
    case WeightLayout::kRows:
      break;
    case WeightLayout::kQ8_0x16:
      return GgmlType::kQ8_0;
    case WeightLayout::kMxfp4x16:
      return GgmlType::kMXFP4;
    case WeightLayout::kIq4NlX16:
      return GgmlType::kIQ4_NL;
    case WeightLayout::kQ4_0x16:
      return GgmlType::kQ4_0;
    case WeightLayout::kIq4XsX16:
      return GgmlType::kIQ4_XS;
    case WeightLayout::kQ3_Kx16:
      return GgmlType::kQ3_K;
    case WeightLayout::kQ2_Kx16:
      return GgmlType::kQ2_K;
    case WeightLayout::kQ5_0x16:
      return GgmlType::kQ5_0;
    case WeightLayout::kQ4_1x16:
      return GgmlType::kQ4_1;
    case WeightLayout::kQ5_1x16:
      return GgmlType::kQ5_1;
    case WeightLayout::kF16x16:
      return GgmlType::kF16;
    case WeightLayout::kBf16x16:
      return GgmlType::kBF16;
    case WeightLayout::kQ4_Kx16:
      return GgmlType::kQ4_K;
    case WeightLayout::kQ6_Kx16:
      return GgmlType::kQ6_K;
    case WeightLayout::kQ5_Kx16:
      return GgmlType::kQ5_K;
  }
  MET_CHECK(false, "kRows is not a packed layout");
  return GgmlType::kF32;
}

size_t q8_0x16_group_bytes(int64_t cols) {
  const int64_t num_blocks = cols / kQk;
  return static_cast<size_t>(num_blocks / 2) * kPairBytes + (num_blocks % 2) * kSingleBytes;
}

size_t mxfp4x16_group_bytes(int64_t cols) { return nibble_x16_group_bytes(cols, nibble_shape_of(GgmlType::kMXFP4)); }

size_t iq4_nlx16_group_bytes(int64_t cols) { return nibble_x16_group_bytes(cols, nibble_shape_of(GgmlType::kIQ4_NL)); }

size_t q5_0x16_group_bytes(int64_t cols) { return nibble_x16_group_bytes(cols, nibble_shape_of(GgmlType::kQ5_0)); }

WeightLayout preferred_layout(GgmlType type) {
  if (selected_matmul_kernels(type).matmul_packed == nullptr) return WeightLayout::kRows;
  return packed_layout_of(type);
}

std::string_view layout_name(WeightLayout layout) {
  switch (layout) {
    case WeightLayout::kRows:
      return "rows";
    case WeightLayout::kQ4_Kx16:
      return "q4_kx16";
    case WeightLayout::kQ6_Kx16:
      return "q6_kx16";
    case WeightLayout::kQ5_Kx16:
      return "q5_kx16";
    case WeightLayout::kQ8_0x16:
      return "q8_0x16";
    case WeightLayout::kMxfp4x16:
      return "mxfp4x16";
    case WeightLayout::kIq4NlX16:
      return "iq4_nlx16";
    case WeightLayout::kQ4_0x16:
      return "q4_0x16";
    case WeightLayout::kIq4XsX16:
      return "iq4_xsx16";
    case WeightLayout::kQ3_Kx16:
      return "q3_kx16";
    case WeightLayout::kQ2_Kx16:
      return "q2_kx16";
    case WeightLayout::kQ5_0x16:
      return "q5_0x16";
    case WeightLayout::kQ4_1x16:
      return "q4_1x16";
    case WeightLayout::kQ5_1x16:
      return "q5_1x16";
    case WeightLayout::kF16x16:
      return "f16x16";
    case WeightLayout::kBf16x16:
      return "bf16x16";
  }
  return "?";
}

WeightLayout packed_layout_of(GgmlType type) {
  if (type == GgmlType::kQ8_0) return WeightLayout::kQ8_0x16;
  if (type == GgmlType::kMXFP4) return WeightLayout::kMxfp4x16;
  if (type == GgmlType::kIQ4_NL) return WeightLayout::kIq4NlX16;
  if (type == GgmlType::kQ4_0) return WeightLayout::kQ4_0x16;
  if (type == GgmlType::kQ5_0) return WeightLayout::kQ5_0x16;
  if (type == GgmlType::kQ4_1) return WeightLayout::kQ4_1x16;
  if (type == GgmlType::kQ5_1) return WeightLayout::kQ5_1x16;
  if (type == GgmlType::kF16) return WeightLayout::kF16x16;
  if (type == GgmlType::kBF16) return WeightLayout::kBf16x16;
  if (type == GgmlType::kQ4_K) return WeightLayout::kQ4_Kx16;
  if (type == GgmlType::kQ6_K) return WeightLayout::kQ6_Kx16;
  if (type == GgmlType::kQ5_K) return WeightLayout::kQ5_Kx16;
  if (type == GgmlType::kIQ4_XS) return WeightLayout::kIq4XsX16;
  if (type == GgmlType::kQ3_K) return WeightLayout::kQ3_Kx16;
  if (type == GgmlType::kQ2_K) return WeightLayout::kQ2_Kx16;
  return WeightLayout::kRows;
}

int64_t layout_groups(WeightLayout layout, int64_t rows) {
  switch (layout) {
    case WeightLayout::kRows:
      return rows;
    case WeightLayout::kQ8_0x16:
      return (rows + kQ8_0x16Rows - 1) / kQ8_0x16Rows;
    case WeightLayout::kMxfp4x16:
    case WeightLayout::kIq4NlX16:
    case WeightLayout::kQ4_0x16:
    case WeightLayout::kQ5_0x16:
    case WeightLayout::kQ4_1x16:
    case WeightLayout::kQ5_1x16:
      return (rows + kMxfp4x16Rows - 1) / kMxfp4x16Rows;
    case WeightLayout::kF16x16:
    case WeightLayout::kBf16x16:
      return (rows + kF16x16Rows - 1) / kF16x16Rows;
    case WeightLayout::kQ4_Kx16:
    case WeightLayout::kQ6_Kx16:
    case WeightLayout::kQ5_Kx16:
    case WeightLayout::kIq4XsX16:
    case WeightLayout::kQ3_Kx16:
    case WeightLayout::kQ2_Kx16:
      return (rows + kKx16Rows - 1) / kKx16Rows;
  }
  return 0;
}

size_t layout_group_stride(const WeightMatrix& w) {
  switch (w.layout) {
    case WeightLayout::kRows:
      return w.row_bytes;
    case WeightLayout::kQ8_0x16:
    case WeightLayout::kMxfp4x16:
    case WeightLayout::kIq4NlX16:
    case WeightLayout::kQ4_0x16:
    case WeightLayout::kQ5_0x16:
    case WeightLayout::kQ4_1x16:
    case WeightLayout::kQ5_1x16:
    case WeightLayout::kF16x16:
    case WeightLayout::kBf16x16:
    case WeightLayout::kQ4_Kx16:
    case WeightLayout::kQ6_Kx16:
    case WeightLayout::kQ5_Kx16:
    case WeightLayout::kIq4XsX16:
    case WeightLayout::kQ3_Kx16:
    case WeightLayout::kQ2_Kx16:
      return packed_group_bytes(w.layout, w.cols);
  }
  return 0;
}

size_t layout_bytes(WeightLayout layout, GgmlType type, int64_t rows, int64_t cols) {
  switch (layout) {
    case WeightLayout::kRows:
      return static_cast<size_t>(*ggml_row_bytes(type, static_cast<uint64_t>(cols))) *
             static_cast<size_t>(rows);
    case WeightLayout::kQ8_0x16:
    case WeightLayout::kMxfp4x16:
    case WeightLayout::kIq4NlX16:
    case WeightLayout::kQ4_0x16:
    case WeightLayout::kQ5_0x16:
    case WeightLayout::kQ4_1x16:
    case WeightLayout::kQ5_1x16:
    case WeightLayout::kF16x16:
    case WeightLayout::kBf16x16:
    case WeightLayout::kQ4_Kx16:
    case WeightLayout::kQ6_Kx16:
    case WeightLayout::kQ5_Kx16:
    case WeightLayout::kIq4XsX16:
    case WeightLayout::kQ3_Kx16:
    case WeightLayout::kQ2_Kx16:
      MET_CHECK(type == packed_type(layout), "{} weights do not go in this packed layout", ggml_type_name(type));
      return static_cast<size_t>(layout_groups(layout, rows)) * packed_group_bytes(layout, cols);
  }
  return 0;
}

WeightMatrix pack_weights(const WeightMatrix& w, WeightLayout layout, uint8_t* dst, int64_t group_begin,
                          int64_t group_end) {
  MET_CHECK(w.layout == WeightLayout::kRows, "pack_weights: the source must be row-major");
  const bool float_layout = layout == WeightLayout::kF16x16 || layout == WeightLayout::kBf16x16;
  MET_CHECK(layout != WeightLayout::kRows && w.type == packed_type(layout) &&
                w.cols % ggml_type_traits(w.type).block_size == 0,
            "pack_weights: no such packed layout for {} x {}", ggml_type_name(w.type), w.cols);
  MET_CHECK(reinterpret_cast<uintptr_t>(dst) % 64 == 0, "pack_weights: dst must be 64-byte aligned");
  const size_t group_bytes = packed_group_bytes(layout, w.cols);
  for (int64_t g = group_begin; g < group_end; ++g) {
    uint8_t* group = dst + static_cast<size_t>(g) * group_bytes;
    std::memset(group, 0, group_bytes);
    if (layout == WeightLayout::kQ8_0x16) {
      pack_q8_0x16_group(w, g, group);
    } else if (float_layout) {
      pack_float_x16_group(w, layout, g, group);
    } else if (layout == WeightLayout::kQ4_Kx16) {
      pack_q4_kx16_group(w, g, group);
    } else if (layout == WeightLayout::kQ6_Kx16) {
      pack_q6_kx16_group(w, g, group);
    } else if (layout == WeightLayout::kQ5_Kx16) {
      pack_q5_kx16_group(w, g, group);
    } else if (layout == WeightLayout::kIq4XsX16) {
      pack_iq4_xsx16_group(w, g, group);
    } else if (layout == WeightLayout::kQ3_Kx16) {
      pack_q3_kx16_group(w, g, group);
    } else if (layout == WeightLayout::kQ2_Kx16) {
      pack_q2_kx16_group(w, g, group);
    } else {
      pack_nibble_x16_group(w, g, group);
    }
  }
  WeightMatrix packed = w;
  packed.data = dst;
  packed.layout = layout;
  return packed;
}

void unpack_row(const WeightMatrix& w, int64_t n, uint8_t* out) {
  MET_DCHECK(0 <= n && n < w.rows);
  switch (w.layout) {
    case WeightLayout::kRows:
      std::memcpy(out, w.data + static_cast<size_t>(n) * w.row_bytes, w.row_bytes);
      return;
    case WeightLayout::kQ8_0x16:
      unpack_q8_0x16_row(w, n, out);
      return;
    case WeightLayout::kMxfp4x16:
    case WeightLayout::kIq4NlX16:
    case WeightLayout::kQ4_0x16:
    case WeightLayout::kQ5_0x16:
    case WeightLayout::kQ4_1x16:
    case WeightLayout::kQ5_1x16:
      unpack_nibble_x16_row(w, n, out);
      return;
    case WeightLayout::kF16x16:
    case WeightLayout::kBf16x16:
      unpack_float_x16_row(w, n, out);
      return;
    case WeightLayout::kQ4_Kx16:
      unpack_q4_kx16_row(w, n, out);
      return;
    case WeightLayout::kQ6_Kx16:
      unpack_q6_kx16_row(w, n, out);
      return;
    case WeightLayout::kQ5_Kx16:
      unpack_q5_kx16_row(w, n, out);
      return;
    case WeightLayout::kIq4XsX16:
      unpack_iq4_xsx16_row(w, n, out);
      return;
    case WeightLayout::kQ3_Kx16:
      unpack_q3_kx16_row(w, n, out);
      return;
    case WeightLayout::kQ2_Kx16:
      unpack_q2_kx16_row(w, n, out);
      return;
  }
}

PackedMatrix PackedMatrix::pack(const WeightMatrix& w, WeightLayout layout, WeightArena& arena) {
  PackedMatrix p;
  const size_t size = layout_bytes(layout, w.type, w.rows, w.cols);
  uint8_t* bytes = arena.allocate(size);
  if (layout == WeightLayout::kRows) {
    std::memcpy(bytes, w.data, size);
    p.matrix_ = w;
    p.matrix_.data = bytes;
    return p;
  }
  p.matrix_ = pack_weights(w, layout, bytes, 0, layout_groups(layout, w.rows));
  return p;
}

PackedMatrix PackedMatrix::gather_rows(const WeightMatrix& w, std::span<const int64_t> rows, WeightArena& arena) {
  MET_CHECK(w.layout == WeightLayout::kRows, "gather_rows needs a row-major matrix");
  PackedMatrix p;
  uint8_t* bytes = arena.allocate(rows.size() * w.row_bytes);
  for (size_t i = 0; i < rows.size(); ++i) {
    MET_CHECK(0 <= rows[i] && rows[i] < w.rows, "row {} of a {}-row matrix", rows[i], w.rows);
    std::memcpy(bytes + i * w.row_bytes, w.data + static_cast<size_t>(rows[i]) * w.row_bytes, w.row_bytes);
  }
  p.matrix_ = w;
  p.matrix_.data = bytes;
  p.matrix_.rows = static_cast<int64_t>(rows.size());
  return p;
}

}  // namespace met::cpu
