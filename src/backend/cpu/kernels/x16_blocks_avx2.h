// The block kernels of the AVX2-family kernels of the 16-row nibble layouts
// (packed_weights.h's WeightLayout::kMxfp4x16, kQ4_0x16, kIq4NlX16,
// kQ5_0x16, kQ4_1x16, kQ5_1x16), for x16_walk_avx2.h's driver: each decodes
// one block of a half group into 8 operands, operand j holding the 8 rows' 4
// codes of quad j, and hands them with the rows' scales to the tier's
// arithmetic, a policy Rows with
//   nibbles<kValueOffset, R>(w, w_scale, a, b, acc): w unsigned, each the
//     value + kValueOffset (at most 31 + 0, 24 + 12, 15 + 16, 128 + 127);
//   signed_codes<R>(w, w_scale, a, b, acc): w the signed values.
// matmul_x16_avx2.cc's Rows runs vpmaddubsw, matmul_x16_avxvnni.cc's
// vpdpbusd; both sum the same exact integers.
//   Mxfp4x16: per block and half, 4 aligned 32-byte loads hold the 8 rows'
//     nibbles; masked (low nibbles) or shifted (high), each goes through one
//     vpshufb of the doubled E2M1 values + 12 (0 .. 24, unsigned). The E8M0
//     exponents widen to 2^(e - 128) with integer ops (bit exact, subnormal
//     e = 0, 1 included).
//   Iq4NlX16: the nibbles through one vpshufb of kIq4Values (signed).
//   Q4_0x16: as Mxfp4x16 with no table: a nibble is Q4_0's value + 8.
//   Q5_0x16: as Q4_0x16 with each operand's fifth bits from the block's qh
//     (a vpshufb spreads the qh byte holding them over their 4 bytes, a
//     compare against each byte's bit gives 16 to add): the value + 16.
//   Q4_1x16, Q5_1x16: the codes (0 .. 15 or 31, no offset) of Q4_0x16 and
//     Q5_0x16, each block's 8 (d, m) pairs in one load (vpackusdw parts d
//     from m), and m x the activation block's scale x its code sum added.
// Include only from translation units built with the AVX2 flags or a
// superset. The helpers are always inlined and the blocks are templates on
// each TU's own Rows (anonymous namespaces), so no copy built for one ISA
// serves another.
// Threading: pure functions. Tested by tests/backend/packed_weights_test.cc.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "backend/cpu/kernels/half_groups_avx2.h"
#include "backend/cpu/kernels/x16_walk_avx2.h"
#include "tensor/block_types.h"

namespace met::cpu::avx2 {

// 2^(e - 128) for the 8 exponent bytes at `e8` (tensor/mxfp4.h's
// e8m0_to_f32_half): (e - 1) << 23 for e >= 2, else 0x00200000 << e.
[[gnu::always_inline]] inline __m256 mxfp4_half_scales(const uint8_t* e8) {
  const __m256i e = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(e8)));
  const __m256i normal = _mm256_slli_epi32(_mm256_sub_epi32(e, _mm256_set1_epi32(1)), 23);
  const __m256i subnormal = _mm256_sllv_epi32(_mm256_set1_epi32(0x00200000), e);
  const __m256i is_normal = _mm256_cmpgt_epi32(e, _mm256_set1_epi32(1));
  return _mm256_castsi256_ps(_mm256_blendv_epi8(subnormal, normal, is_normal));
}

// The 8 operands of half h's lines of one block's nibbles at `nibbles`
// (four 64-byte lines, the half's 32 bytes of each): w[j] the low nibbles of
// line j, w[j + 4] the high ones, each through one vpshufb of `table`.
[[gnu::always_inline]] inline void table_nibbles(__m256i table, const uint8_t* nibbles, __m256i (&w)[8]) {
  const __m256i low_mask = _mm256_set1_epi8(0x0F);
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    const __m256i v = _mm256_load_si256(reinterpret_cast<const __m256i*>(nibbles + 64 * j));
    w[j] = _mm256_shuffle_epi8(table, _mm256_and_si256(v, low_mask));
    w[j + 4] = _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(v, 4), low_mask));
  }
}

// Half h's 8 fp16 scales of block k, from the 16 rows x the unit's blocks of
// fp16 at `scales` (Q4_0x16's and Iq4NlX16's), as floats.
[[gnu::always_inline]] inline __m256 half_fp16_scales(const uint8_t* scales, int64_t k, int h) {
  const uint8_t* p = scales + 32 * static_cast<size_t>(k) + 2 * kHalfGroupRows * static_cast<size_t>(h);
  return _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(p)));
}

// Mxfp4x16: units of four blocks' nibbles (256 bytes each), then 64 bytes of
// exponents (16 rows x the unit's blocks).
template <class Rows>
struct Mxfp4x16Block {
  static constexpr int kUnitBlocks = 4;
  static constexpr size_t kBlockBytes = kX16GroupRows * kQk / 2;  // 256: 4 lines of 16 rows x 4 bytes
  static constexpr size_t kUnitBytes = kUnitBlocks * kBlockBytes + 64;
  static constexpr int kValueOffset = 12;  // -min(kMxfp4Values)
  template <int R>
  static void step(const uint8_t* unit, int64_t k, int64_t unit_blocks, int h, const ActRow (&a)[R], int64_t b,
                   __m256 (&acc)[R]) {
    // kMxfp4Values + kValueOffset (block_types.h), in both 128-bit lanes.
    const __m256i table = _mm256_setr_epi8(12, 13, 14, 15, 16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0, 12, 13, 14,
                                           15, 16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0);
    __m256i w[8];
    table_nibbles(table, unit + static_cast<size_t>(k) * kBlockBytes + 32 * static_cast<size_t>(h), w);
    const uint8_t* exponents = unit + static_cast<size_t>(unit_blocks) * kBlockBytes;
    const __m256 w_scale = mxfp4_half_scales(exponents + kX16GroupRows * static_cast<size_t>(k) +
                                             kHalfGroupRows * static_cast<size_t>(h));
    Rows::template nibbles<kValueOffset, R>(w, w_scale, a, b, acc);
  }
};

// Q4_0x16: Mxfp4x16's units with 128 bytes of fp16 scales (16 rows x the
// unit's blocks); a nibble is the value + 8, no table.
template <class Rows>
struct Q4_0x16Block {
  static constexpr int kUnitBlocks = 4;
  static constexpr size_t kBlockBytes = kX16GroupRows * kQk / 2;  // 256
  static constexpr size_t kUnitBytes = kUnitBlocks * kBlockBytes + 128;
  static constexpr int kValueOffset = 8;
  template <int R>
  static void step(const uint8_t* unit, int64_t k, int64_t unit_blocks, int h, const ActRow (&a)[R], int64_t b,
                   __m256 (&acc)[R]) {
    const __m256i low_mask = _mm256_set1_epi8(0x0F);
    const uint8_t* nibbles = unit + static_cast<size_t>(k) * kBlockBytes + 32 * static_cast<size_t>(h);
    __m256i w[8];
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      const __m256i v = _mm256_load_si256(reinterpret_cast<const __m256i*>(nibbles + 64 * j));
      w[j] = _mm256_and_si256(v, low_mask);
      w[j + 4] = _mm256_and_si256(_mm256_srli_epi16(v, 4), low_mask);
    }
    const __m256 w_scale = half_fp16_scales(unit + static_cast<size_t>(unit_blocks) * kBlockBytes, k, h);
    Rows::template nibbles<kValueOffset, R>(w, w_scale, a, b, acc);
  }
};

// Iq4NlX16: Q4_0x16's units; the nibbles go through one vpshufb of
// kIq4Values, signed (the values + an offset would saturate AVX2's
// vpmaddubsw pairs, 2 x 240 x 127), and on to Rows::signed_codes.
template <class Rows>
struct Iq4NlX16Block {
  static constexpr int kUnitBlocks = 4;
  static constexpr size_t kBlockBytes = kX16GroupRows * kQk / 2;  // 256
  static constexpr size_t kUnitBytes = kUnitBlocks * kBlockBytes + 128;
  template <int R>
  static void step(const uint8_t* unit, int64_t k, int64_t unit_blocks, int h, const ActRow (&a)[R], int64_t b,
                   __m256 (&acc)[R]) {
    // kIq4Values (block_types.h), in both 128-bit lanes.
    const __m256i table = _mm256_setr_epi8(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113,
                                           -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113);
    __m256i w[8];
    table_nibbles(table, unit + static_cast<size_t>(k) * kBlockBytes + 32 * static_cast<size_t>(h), w);
    const __m256 w_scale = half_fp16_scales(unit + static_cast<size_t>(unit_blocks) * kBlockBytes, k, h);
    Rows::template signed_codes<R>(w, w_scale, a, b, acc);
  }
};

// Operand j's 8 rows' codes (j < 4: elements 4j .. 4j + 3, the low nibbles
// of nibble load j; else 16 + 4(j - 4) .., the high ones of load j - 4) of
// the block at `nibbles` (half h's 32-byte lines), with their fifth bits
// from the 8 rows' qh (`qh`, 4 bytes a row) when kFifth: bits 4(j % 2) .. +3
// of qh byte j / 2 (j < 4) or 2 + (j - 4) / 2, spread over the operand's 4
// bytes by a vpshufb and compared against each byte's bit.
template <bool kFifth>
[[gnu::always_inline]] inline void five_bit_codes(const uint8_t* nibbles, __m256i qh, __m256i (&w)[8]) {
  const __m256i low_mask = _mm256_set1_epi8(0x0F), bit4 = _mm256_set1_epi8(0x10);
  const __m256i dwords = _mm256_setr_epi32(0, 0x04040404, 0x08080808, 0x0C0C0C0C, 0, 0x04040404, 0x08080808,
                                           0x0C0C0C0C);
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) {
    const __m256i v = _mm256_load_si256(reinterpret_cast<const __m256i*>(nibbles + 64 * (j % 4)));
    w[j] = _mm256_and_si256(j < 4 ? v : _mm256_srli_epi16(v, 4), low_mask);
    if constexpr (kFifth) {
      const int byte = j < 4 ? j / 2 : 2 + (j - 4) / 2;
      const __m256i bits = _mm256_set1_epi32(j % 2 == 0 ? 0x08040201 : static_cast<int>(0x80402010u));
      const __m256i select = _mm256_add_epi8(dwords, _mm256_set1_epi8(static_cast<char>(byte)));
      const __m256i spread = _mm256_and_si256(_mm256_shuffle_epi8(qh, select), bits);
      w[j] = _mm256_or_si256(w[j], _mm256_and_si256(_mm256_cmpeq_epi8(spread, bits), bit4));
    }
  }
}

// Q4_1x16 (kFifth false) and Q5_1x16: Q4_0x16's and Q5_0x16's units with 16
// rows x (fp16 d, fp16 m) a block (256 bytes) as the scales; codes 0 .. 15
// or 31 with no offset, and m x the activation block's scale x its code sum
// added per row.
template <class Rows, bool kFifth>
struct MinNibbleX16Block {
  static constexpr int kUnitBlocks = 4;
  static constexpr size_t kBlockBytes = kX16GroupRows * kQk / 2;      // 256
  static constexpr size_t kQhBytes = kFifth ? kX16GroupRows * 4 : 0;  // 64
  static constexpr size_t kUnitBytes = kUnitBlocks * (kBlockBytes + kQhBytes) + 256;
  template <int R>
  static void step(const uint8_t* unit, int64_t k, int64_t unit_blocks, int h, const ActRow (&a)[R], int64_t b,
                   __m256 (&acc)[R]) {
    const auto blocks = static_cast<size_t>(unit_blocks);
    __m256i qh = _mm256_setzero_si256();
    if constexpr (kFifth) {
      qh = _mm256_load_si256(reinterpret_cast<const __m256i*>(unit + blocks * kBlockBytes +
                                                              static_cast<size_t>(k) * kQhBytes + 32 * h));
    }
    __m256i w[8];
    five_bit_codes<kFifth>(unit + static_cast<size_t>(k) * kBlockBytes + 32 * static_cast<size_t>(h), qh, w);
    // Half h's 8 (d, m) pairs, m high: d and m packed apart, then widened.
    const __m256i dm = _mm256_load_si256(reinterpret_cast<const __m256i*>(
        unit + blocks * (kBlockBytes + kQhBytes) + 64 * static_cast<size_t>(k) + 32 * h));
    const __m256i halves = _mm256_permute4x64_epi64(
        _mm256_packus_epi32(_mm256_and_si256(dm, _mm256_set1_epi32(0xFFFF)), _mm256_srli_epi32(dm, 16)), 0xD8);
    Rows::template nibbles<0, R>(w, _mm256_cvtph_ps(_mm256_castsi256_si128(halves)), a, b, acc);
    const __m256 w_min = _mm256_cvtph_ps(_mm256_extracti128_si256(halves, 1));
    for (int r = 0; r < R; ++r) {
      const ActQ8_0Tail tail = act_tail(a[r], b);
      const auto sum = static_cast<float>(-(tail.offset_bias / 128));  // the activation block's code sum
      acc[r] = _mm256_fmadd_ps(w_min, _mm256_set1_ps(tail.d * sum), acc[r]);
    }
  }
};

// Q5_0x16: Q4_0x16's units with each block's qh (16 rows x 4 bytes) after
// the nibbles; a code is the nibble with its fifth bit, the value + 16.
template <class Rows>
struct Q5_0x16Block {
  static constexpr int kUnitBlocks = 4;
  static constexpr size_t kBlockBytes = kX16GroupRows * kQk / 2;  // 256
  static constexpr size_t kQhBytes = kX16GroupRows * 4;            // 64
  static constexpr size_t kUnitBytes = kUnitBlocks * (kBlockBytes + kQhBytes) + 128;
  static constexpr int kValueOffset = 16;
  template <int R>
  static void step(const uint8_t* unit, int64_t k, int64_t unit_blocks, int h, const ActRow (&a)[R], int64_t b,
                   __m256 (&acc)[R]) {
    const auto blocks = static_cast<size_t>(unit_blocks);
    const __m256i qh = _mm256_load_si256(
        reinterpret_cast<const __m256i*>(unit + blocks * kBlockBytes + static_cast<size_t>(k) * kQhBytes + 32 * h));
    __m256i w[8];
    five_bit_codes<true>(unit + static_cast<size_t>(k) * kBlockBytes + 32 * static_cast<size_t>(h), qh, w);
    const uint8_t* scales = unit + blocks * (kBlockBytes + kQhBytes) + 32 * static_cast<size_t>(k) +
                            2 * kHalfGroupRows * static_cast<size_t>(h);
    const __m256 w_scale = _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(scales)));
    Rows::template nibbles<kValueOffset, R>(w, w_scale, a, b, acc);
  }
};

}  // namespace met::cpu::avx2
