// The block decoders of the AVX-512 16-row packed kernels
// (packed_weights.h's WeightLayout::kQ8_0x16, kMxfp4x16, kIq4NlX16,
// kQ4_0x16, kQ5_0x16, kQ4_1x16, kQ5_1x16), shared by the vector tile driver
// (matmul_x16_avx512.cc) and the AMX one (matmul_x16_amx.h). A decoder D
// has kUnitBlocks, kBlockBytes, kUnitBytes (its unit of blocks and their
// scales), kMaxRows and kChains (the vector driver's tile height and float
// accumulator chains), kPrefetchUnits, and
//   static __m512 decode(unit, k, unit_blocks, __m512i (&w)[8]):
// block k of the unit as 8 registers, register j holding the 16 rows' 4
// unsigned bytes of quad j (weight code + 128; an AMX B tile of 8 rows x 64
// bytes), and the 16 rows' scales as floats; a type with a min per block
// also has mins(unit, k, unit_blocks), and one whose codes are stored as
// that operand already has kCodesInPlace (block k at unit + k kBlockBytes).
// Include only from translation units built with the AVX-512 flags.
// Threading: pure functions. Tested by tests/backend/packed_weights_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/avx512_intrinsics.h"
#include "tensor/block_types.h"

namespace met::cpu::avx512 {

inline constexpr int kX16GroupRows = 16;

// Q8_0x16: units of two blocks (codes of b, codes of b + 1, 32 scales); an
// odd last block is a unit of its codes and 16 scales.
struct Q8_0x16Decoder {
  static constexpr int kUnitBlocks = 2;
  static constexpr size_t kBlockBytes = kX16GroupRows * kQk;  // 512: 8 quads x 16 rows x 4
  static constexpr size_t kUnitBytes = kUnitBlocks * kBlockBytes + 64;
  static constexpr int kMaxRows = 4;
  static constexpr int kChains = 2;
  static constexpr size_t kPrefetchUnits = 0;
  static constexpr bool kCodesInPlace = true;
  static __m512 decode(const uint8_t* unit, int64_t k, int64_t unit_blocks, __m512i (&w)[8]) {
    const uint8_t* codes = unit + static_cast<size_t>(k) * kBlockBytes;
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) w[j] = _mm512_load_si512(codes + 64 * j);
    const uint8_t* scales = unit + static_cast<size_t>(unit_blocks) * kBlockBytes + 32 * static_cast<size_t>(k);
    return _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(scales)));
  }
};

// 2^(e - 128) for the 16 exponent bytes at `e16` (tensor/mxfp4.h's
// e8m0_to_f32_half): (e - 1) << 23 for e >= 2, else 0x00200000 << e.
inline __m512 mxfp4_scales(const uint8_t* e16) {
  const __m512i e = _mm512_cvtepu8_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(e16)));
  const __m512i normal = _mm512_slli_epi32(_mm512_sub_epi32(e, _mm512_set1_epi32(1)), 23);
  const __m512i subnormal = _mm512_sllv_epi32(_mm512_set1_epi32(0x00200000), e);
  const __mmask16 is_normal = _mm512_cmpge_epu32_mask(e, _mm512_set1_epi32(2));
  return _mm512_castsi512_ps(_mm512_mask_blend_epi32(is_normal, subnormal, normal));
}

// The 16 rows' 4-bit codes of one block of a Mxfp4x16 or Iq4NlX16 unit (4
// aligned loads) through `table` (the values + 128, per 128-bit lane): w[j]
// the low nibbles of load j (elements 4j .. 4j+3), w[j + 4] the high ones.
[[gnu::always_inline]] inline void decode_nibbles(__m512i table, const uint8_t* nibbles, __m512i (&w)[8]) {
  const __m512i low_mask = _mm512_set1_epi8(0x0F);
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    const __m512i v = _mm512_load_si512(nibbles + 64 * j);
    w[j] = _mm512_shuffle_epi8(table, _mm512_and_si512(v, low_mask));
    w[j + 4] = _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srli_epi16(v, 4), low_mask));
  }
}

// Mxfp4x16: units of four blocks' nibbles (256 bytes each), then 64 bytes of
// exponents (16 rows x the unit's blocks).
struct Mxfp4x16Decoder {
  static constexpr int kUnitBlocks = 4;
  static constexpr size_t kBlockBytes = kX16GroupRows * kQk / 2;  // 256: 4 loads of 16 rows x 4 bytes
  static constexpr size_t kUnitBytes = kUnitBlocks * kBlockBytes + 64;
  static constexpr int kMaxRows = 16;
  static constexpr int kChains = 1;
  static constexpr size_t kPrefetchUnits = 6;
  static __m512 decode(const uint8_t* unit, int64_t k, int64_t unit_blocks, __m512i (&w)[8]) {
    // kMxfp4Values + 128 (block_types.h), in every 128-bit lane.
    const __m512i table = _mm512_broadcast_i32x4(
        _mm_setr_epi8(static_cast<char>(128), static_cast<char>(129), static_cast<char>(130), static_cast<char>(131),
                      static_cast<char>(132), static_cast<char>(134), static_cast<char>(136), static_cast<char>(140),
                      static_cast<char>(128), 127, 126, 125, 124, 122, 120, 116));
    decode_nibbles(table, unit + static_cast<size_t>(k) * kBlockBytes, w);
    return mxfp4_scales(unit + static_cast<size_t>(unit_blocks) * kBlockBytes + kX16GroupRows * static_cast<size_t>(k));
  }
};

// Iq4NlX16 and Q4_0x16: Mxfp4x16's units with 128 bytes of fp16 scales (16
// rows x the unit's blocks); the codes go through one vpshufb of the type's
// values + 128 (V::table()).
template <class V>
struct FpScaledNibbleX16Decoder {
  static constexpr int kUnitBlocks = 4;
  static constexpr size_t kBlockBytes = kX16GroupRows * kQk / 2;  // 256
  static constexpr size_t kUnitBytes = kUnitBlocks * kBlockBytes + 128;
  static constexpr int kMaxRows = 16;
  static constexpr int kChains = 1;
  static constexpr size_t kPrefetchUnits = 6;
  static __m512 decode(const uint8_t* unit, int64_t k, int64_t unit_blocks, __m512i (&w)[8]) {
    decode_nibbles(V::table(), unit + static_cast<size_t>(k) * kBlockBytes, w);
    const uint8_t* scales = unit + static_cast<size_t>(unit_blocks) * kBlockBytes + 32 * static_cast<size_t>(k);
    return _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(scales)));
  }
};

// kIq4Values + 128 (block_types.h), in every 128-bit lane.
struct Iq4NlValues {
  static __m512i table() {
    return _mm512_broadcast_i32x4(_mm_setr_epi8(1, 24, 45, 63, 79, 93, 106, 118, static_cast<char>(129),
                                                static_cast<char>(141), static_cast<char>(153), static_cast<char>(166),
                                                static_cast<char>(181), static_cast<char>(197), static_cast<char>(217),
                                                static_cast<char>(241)));
  }
};

// Q4_0's values, code - 8, + 128: 120 .. 135, in every 128-bit lane.
struct Q4_0Values {
  static __m512i table() {
    return _mm512_broadcast_i32x4(_mm_setr_epi8(120, 121, 122, 123, 124, 125, 126, 127, static_cast<char>(128),
                                                static_cast<char>(129), static_cast<char>(130), static_cast<char>(131),
                                                static_cast<char>(132), static_cast<char>(133), static_cast<char>(134),
                                                static_cast<char>(135)));
  }
};

// Adds 16 to each operand byte whose element's fifth bit is set in the
// block's qh at `qh_at` (16 rows x 4 bytes). Operand j holds elements 4j ..
// 4j + 3 (j < 4) or 16 + 4(j - 4) ..: their bits are bits 4(j % 2) .. +3 of
// qh byte j / 2 (j < 4) or 2 + (j - 4) / 2, which a vpshufb spreads over
// the operand's 4 bytes for a vptestmb to pick.
[[gnu::always_inline]] inline void add_fifth_bits(const uint8_t* qh_at, __m512i (&w)[8]) {
  const __m512i qh = _mm512_load_si512(qh_at);
  const __m512i dwords = _mm512_broadcast_i32x4(_mm_setr_epi32(0, 0x04040404, 0x08080808, 0x0C0C0C0C));
  const __m512i sixteen = _mm512_set1_epi8(16);
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) {
    const int byte = j < 4 ? j / 2 : 2 + (j - 4) / 2;
    const __m512i bits = _mm512_set1_epi32(j % 2 == 0 ? 0x08040201 : static_cast<int>(0x80402010u));
    const __m512i select = _mm512_add_epi8(dwords, _mm512_set1_epi8(static_cast<char>(byte)));
    const __m512i spread = _mm512_shuffle_epi8(qh, select);
    w[j] = _mm512_mask_add_epi8(w[j], _mm512_test_epi8_mask(spread, bits), w[j], sixteen);
  }
}

// The codes + 128: 128 .. 143, in every 128-bit lane (Q4_1's and Q5_1's
// low 4 bits, whose values are d x code + m).
inline __m512i codes_plus_128() {
  return _mm512_broadcast_i32x4(
      _mm_setr_epi8(static_cast<char>(128), static_cast<char>(129), static_cast<char>(130), static_cast<char>(131),
                    static_cast<char>(132), static_cast<char>(133), static_cast<char>(134), static_cast<char>(135),
                    static_cast<char>(136), static_cast<char>(137), static_cast<char>(138), static_cast<char>(139),
                    static_cast<char>(140), static_cast<char>(141), static_cast<char>(142), static_cast<char>(143)));
}

// Q4_1x16 (kFifth false) and Q5_1x16: units of four blocks' nibbles (256
// bytes each), Q5_1's qh (64 bytes each), then 16 rows x (fp16 d, fp16 m)
// a block (256 bytes). decode() gives the codes + 128 and the 16 d, mins()
// the 16 m (block_step adds m x the activation block's sum).
template <bool kFifth>
struct MinNibbleX16Decoder {
  static constexpr int kUnitBlocks = 4;
  static constexpr size_t kBlockBytes = kX16GroupRows * kQk / 2;      // 256
  static constexpr size_t kQhBytes = kFifth ? kX16GroupRows * 4 : 0;  // 64
  static constexpr size_t kUnitBytes = kUnitBlocks * (kBlockBytes + kQhBytes) + 256;
  static constexpr int kMaxRows = 16;
  static constexpr int kChains = 1;
  static constexpr size_t kPrefetchUnits = 6;
  static __m512 decode(const uint8_t* unit, int64_t k, int64_t unit_blocks, __m512i (&w)[8]) {
    decode_nibbles(codes_plus_128(), unit + static_cast<size_t>(k) * kBlockBytes, w);
    if constexpr (kFifth) {
      add_fifth_bits(unit + static_cast<size_t>(unit_blocks) * kBlockBytes + static_cast<size_t>(k) * kQhBytes, w);
    }
    return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(dm(unit, k, unit_blocks)));
  }
  static __m512 mins(const uint8_t* unit, int64_t k, int64_t unit_blocks) {
    return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(dm(unit, k, unit_blocks), 16)));
  }
  // The 16 rows' (d, m) of block k, one row a 32-bit lane (m high).
  static __m512i dm(const uint8_t* unit, int64_t k, int64_t unit_blocks) {
    return _mm512_load_si512(unit + static_cast<size_t>(unit_blocks) * (kBlockBytes + kQhBytes) +
                             64 * static_cast<size_t>(k));
  }
};

// Q5_0x16: units of four blocks' nibbles (256 bytes each), their qh (64
// bytes each), then 128 bytes of fp16 scales.
struct Q5_0x16Decoder {
  static constexpr int kUnitBlocks = 4;
  static constexpr size_t kBlockBytes = kX16GroupRows * kQk / 2;  // 256
  static constexpr size_t kQhBytes = kX16GroupRows * 4;           // 64
  static constexpr size_t kUnitBytes = kUnitBlocks * (kBlockBytes + kQhBytes) + 128;
  static constexpr int kMaxRows = 16;
  static constexpr int kChains = 1;
  static constexpr size_t kPrefetchUnits = 6;
  static __m512 decode(const uint8_t* unit, int64_t k, int64_t unit_blocks, __m512i (&w)[8]) {
    // The low 4 bits' part of (code - 16) + 128: 112 .. 127.
    const __m512i table = _mm512_broadcast_i32x4(
        _mm_setr_epi8(112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127));
    decode_nibbles(table, unit + static_cast<size_t>(k) * kBlockBytes, w);
    const auto blocks = static_cast<size_t>(unit_blocks);
    add_fifth_bits(unit + blocks * kBlockBytes + static_cast<size_t>(k) * kQhBytes, w);
    const uint8_t* scales = unit + blocks * (kBlockBytes + kQhBytes) + 32 * static_cast<size_t>(k);
    return _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(scales)));
  }
};

using Iq4NlX16Decoder = FpScaledNibbleX16Decoder<Iq4NlValues>;
using Q4_0x16Decoder = FpScaledNibbleX16Decoder<Q4_0Values>;
using Q4_1x16Decoder = MinNibbleX16Decoder<false>;
using Q5_1x16Decoder = MinNibbleX16Decoder<true>;

}  // namespace met::cpu::avx512
