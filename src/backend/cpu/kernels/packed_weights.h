// Packed weight layouts: a weight matrix copied once at load into the order a
// kernel streams it, where that beats reading GGUF rows in place.
//   WeightLayout::kQ8_0x16: Q8_0 rows packed 16 at a time. Group g holds rows
//   16 g .. 16 g + 15 (the last group padded with rows of zero scale) in
//   group_bytes bytes, its blocks in pairs; a pair (1088 bytes, 17 cache
//   lines) is
//     codes of block b:     for quad j < 8, 16 rows x 4 bytes: row r's
//                           codes 4j .. 4j+3 at byte 64 j + 4 r
//     codes of block b + 1: the same
//     scales:               16 fp16 d of block b (row order), 16 of b + 1
//   and an odd last block is a 576-byte unit (its codes, 16 scales, 32 zero
//   bytes). Codes are stored offset by +128 as uint8, the operand vpdpbusd
//   takes unsigned: one aligned 64-byte load feeds one vpdpbusd whose 16
//   int32 lanes are 16 output rows, 16 scales widen with one vcvtph2ps, and
//   a thread's share of the matrix is one sequential stream.
//   WeightLayout::kMxfp4x16: MXFP4 rows packed 16 at a time, groups as
//   above (padding rows have zero codes and exponents), blocks in units of
//   four; a unit (1088 bytes, 17 cache lines) is
//     nibbles of block b:   for j < 4, 16 rows x 4 bytes: row r's qs[4j ..
//                           4j+3] at byte 64 j + 4 r, so one aligned load
//                           holds elements 4j .. 4j+3 of 16 rows in its low
//                           nibbles and 16+4j .. 16+4j+3 in its high ones
//     nibbles of b + 1, b + 2, b + 3: the same
//     exponents:            16 E8M0 bytes of block b (row order), then
//                           those of b + 1, b + 2, b + 3
//   and a last unit of k < 4 blocks is k x 256 bytes of nibbles, then 64
//   bytes of exponents (16 k used, the rest zero). The bytes stay MXFP4's
//   (as many as the rows hold once they fill whole groups and units): a
//   kernel decodes 16 rows' codes with two vpshufb per load, once per tile
//   of activation rows.
//   WeightLayout::kIq4NlX16: IQ4_NL as Mxfp4x16, each block's scale its
//   fp16 d, so a unit's scales take 128 bytes (16 rows x 4 blocks x 2; a
//   unit is 1152 bytes, 18 lines; a last unit k x 256 + 128).
//   WeightLayout::kQ4_0x16: Q4_0 exactly as Iq4NlX16 (the blocks are alike:
//   fp16 d, then element j in the low nibble of byte j and element j + 16
//   in its high nibble); only the values differ (code - 8).
//   WeightLayout::kQ5_0x16: Q5_0 as Iq4NlX16 with each block's qh (the
//   fifth bits, bit j of element j) after the unit's nibbles: 16 rows x 4
//   bytes a block (row r's at byte 4r), so a unit is 4 x (256 + 64) + 128 =
//   1408 bytes (22 lines; a last unit k x 320 + 128).
//   WeightLayout::kQ4_1x16, kQ5_1x16: Q4_0x16 and Q5_0x16 with each row's
//   (fp16 d, fp16 m) as its 4-byte scale (row r's at byte 4r of the block's
//   64): units of 1280 and 1536 bytes (20 and 24 lines).
//   WeightLayout::kF16x16: F16 rows packed 16 at a time; input k of the 16
//   rows is 32 bytes at 32 k (row order), so one load of 32 bytes widens
//   with one vcvtph2ps into 16 output rows' weights for an FMA against a
//   broadcast activation (cols any; group_bytes 32 cols).
//   WeightLayout::kBf16x16: BF16 rows packed 16 at a time in pairs of
//   inputs: inputs 2p, 2p + 1 of row r are the 4 bytes at 64 p + 4 r, so
//   one aligned 64-byte load feeds one vdpbf16ps whose 16 lanes are 16
//   output rows, against the activation's pair broadcast (an odd last input
//   is paired with 0; group_bytes 64 ceil(cols / 2)).
//   WeightLayout::kQ4_Kx16: Q4_K rows packed 16 at a time (groups as above,
//   padding rows all zero), one unit per super-block of 256 inputs (2368
//   bytes, 37 lines; kquant_x16_layout.h has the offsets):
//     codes:  32 loads, load 8c + j holding row r's qs[32c + 4j .. +3] at
//             byte 4r: its low nibbles are elements 64c + 4j .. +3 of the 16
//             rows (sub-block 2c), its high ones 64c + 32 + 4j .. (2c + 1)
//     scales: the 6-bit sub-block scales unpacked to bytes, sub-block s of
//             row r at byte 16s + r; then the mins, the same way
//     d:      16 fp16 d (row order), then 16 fp16 dmin
//   so a kernel never decodes the 12-byte scale packing (a bijection of the
//   16 6-bit fields: unpack_row re-packs it bit for bit).
//   WeightLayout::kQ5_Kx16: Q5_K rows as Q4_Kx16, with 8 loads of qh after
//   the codes (row r's qh[4i .. +3] at byte 4r of load i): 2880 bytes, 45
//   lines a unit.
//   WeightLayout::kQ6_Kx16: Q6_K rows as Q4_Kx16, a unit (3392 bytes, 53
//   lines) per super-block: 32 loads of ql (row r's ql[4j .. +3] at byte 4r
//   of load j), 16 of qh (qh[4i .. +3]), the 16 int8 scales of each row in
//   pairs (scales[2p], scales[2p + 1] of row r at bytes 32p + 2r, +1: one
//   vpmovsxbw gives 16 rows' pairs as int16), 16 fp16 d, 32 zero bytes.
//   WeightLayout::kIq4XsX16: IQ4_XS rows as Q4_Kx16's codes, a unit (2240
//   bytes, 35 lines) per super-block: 32 loads of codes (load 4g + i holding
//   row r's qs[16g + 4i .. +3] at byte 4r: elements 32g + 4i .. +3 of the 16
//   rows in its low nibbles, 32g + 16 + 4i .. in its high ones), the 8
//   group scales ls - 32 as int8 (group g of row r at byte 16g + r), 16 fp16
//   d, 32 zero bytes.
//   WeightLayout::kQ3_Kx16: Q3_K rows, a unit (1856 bytes, 29 lines) per
//   super-block: 16 loads of qs (row r's qs[4k .. +3] at byte 4r of load
//   k), 8 of hmask (hmask[4i .. +3]), the 16 group scales - 32 as int8 in
//   Q6_Kx16's pairs, 16 fp16 d, 32 zero bytes.
//   WeightLayout::kQ2_Kx16: Q2_K rows, a unit (1344 bytes, 21 lines) per
//   super-block: Q3_Kx16's 16 loads of qs, the 16 group bytes (scale | min
//   << 4) as they are, in Q6_Kx16's pairs, 16 fp16 d, 16 fp16 dmin.
//   Activations stay Q8_K for all six: their per-16 sums serve Q4_K's
//   and Q2_K's mins, Q6_K's offset of 32, Q3_K's of 4 and IQ4_XS's codes
//   offset by 128.
// Packing is exact: unpack_row() gives back the GGUF row bit for bit.
// Threading: pure functions; PackedMatrix is immutable after pack().
// Tested by tests/backend/packed_weights_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "backend/cpu/huge_page_memory.h"
#include "backend/cpu/kernels/matmul.h"

namespace met::cpu {

inline constexpr int64_t kQ8_0x16Rows = 16;
inline constexpr int64_t kMxfp4x16Rows = 16;
inline constexpr int64_t kIq4NlX16Rows = 16;  // and Q4_0x16
inline constexpr int64_t kF16x16Rows = 16;  // and Bf16x16
inline constexpr int64_t kKx16Rows = 16;  // kQ4_Kx16 .. kQ2_Kx16 (packed_kquant.h)

// Bytes of one 16-row group of Q8_0x16 with `cols` inputs (a multiple of 32).
size_t q8_0x16_group_bytes(int64_t cols);
// Bytes of one 16-row group of Mxfp4x16 with `cols` inputs (a multiple of 32).
size_t mxfp4x16_group_bytes(int64_t cols);
// Bytes of one 16-row group of Iq4NlX16 or Q4_0x16 with `cols` inputs (a
// multiple of 32).
size_t iq4_nlx16_group_bytes(int64_t cols);
// Bytes of one 16-row group of Q5_0x16 with `cols` inputs (a multiple of 32).
size_t q5_0x16_group_bytes(int64_t cols);

// The layout matmul runs fastest on for weights of `type` on this CPU:
// kRows, or a packed layout when the selected kernels have one for it.
WeightLayout preferred_layout(GgmlType type);
// The weight type packed `layout` holds. REQUIRES: layout != kRows.
GgmlType packed_type(WeightLayout layout);
// The packed layout weights of `type` have (kRows: none), whatever the CPU.
WeightLayout packed_layout_of(GgmlType type);
// "q8_0x16", "f16x16", ... ("rows" for kRows).
std::string_view layout_name(WeightLayout layout);

// Bytes of a rows x cols matrix of `type` in `layout`.
size_t layout_bytes(WeightLayout layout, GgmlType type, int64_t rows, int64_t cols);

// Packs row-major `w` into `layout` at `dst` (layout_bytes long, 64-byte
// aligned), and returns the view of the packed copy. Groups [group_begin,
// group_end) only, so callers may split the work; the returned view is the
// same whatever the range.
// REQUIRES: w.layout == kRows; `layout` is a packed layout for w.type.
WeightMatrix pack_weights(const WeightMatrix& w, WeightLayout layout, uint8_t* dst, int64_t group_begin,
                          int64_t group_end);
// Groups of `layout` a rows-row matrix has (rows, for kRows).
int64_t layout_groups(WeightLayout layout, int64_t rows);
// Bytes from one group of `w` to the next (w.row_bytes, for kRows): the
// MatmulTask::weight_row_bytes of its kernels.
size_t layout_group_stride(const WeightMatrix& w);

// Writes row n of `w` (any layout) as GGUF row bytes (w.row_bytes) to `out`.
void unpack_row(const WeightMatrix& w, int64_t n, uint8_t* out);

// A packed copy of a weight matrix, its bytes in `arena` (a model's, so its
// weights share huge pages, huge_page_memory.h), which must outlive it.
class PackedMatrix {
 public:
  // Packs `w` (row-major) into `layout` (kRows: a copy of its bytes).
  static PackedMatrix pack(const WeightMatrix& w, WeightLayout layout, WeightArena& arena);
  // A row-major copy of rows `rows` of row-major `w`, in that order (a
  // matrix a file stores interleaved with others, split at load).
  // REQUIRES: w.layout == kRows; every entry of `rows` in [0, w.rows).
  static PackedMatrix gather_rows(const WeightMatrix& w, std::span<const int64_t> rows, WeightArena& arena);
  const WeightMatrix& matrix() const { return matrix_; }

 private:
  WeightMatrix matrix_;
};

}  // namespace met::cpu
