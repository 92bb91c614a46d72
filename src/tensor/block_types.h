// Quant blocks: the on-disk layouts of GGUF/ggml's block types, byte for byte.
// Every struct is packed (alignment 1), so a block may be read in place at any
// offset of a mapped file; fp16 fields are stored as their uint16 bits
// (decode with fp16_to_f32 from tensor/half.h).
// Invariants: sizeof(Block*) equals ggml_type_traits(type).type_size and
// kElementsPer* its block_size (static_asserts here; the link to the traits
// table is checked by tests/tensor/block_types_test.cc).
// Threading: plain data. The decoding rules are in tensor/reference/.
#pragma once

#include <cstdint>

namespace met {

inline constexpr int kQk = 32;           // elements per block of the *_0 / *_1 families
inline constexpr int kQkK = 256;         // elements per super-block of the k-quants
inline constexpr int kKScaleBytes = 12;  // packed 6-bit scales of Q3_K/Q4_K/Q5_K

// x = d * (q - 8); element j < 16 in the low nibble of qs[j], j + 16 in the high.
struct [[gnu::packed]] BlockQ4_0 {
  uint16_t d;
  uint8_t qs[kQk / 2];
};

// x = d * q + m, nibbles as in Q4_0.
struct [[gnu::packed]] BlockQ4_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qs[kQk / 2];
};

// x = d * (q - 16); q's low 4 bits as in Q4_0, bit 4 of element j is bit j of
// the little-endian uint32 qh.
struct [[gnu::packed]] BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[kQk / 2];
};

// x = d * q + m, 5-bit q as in Q5_0.
struct [[gnu::packed]] BlockQ5_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qh[4];
  uint8_t qs[kQk / 2];
};

// x = d * q.
struct [[gnu::packed]] BlockQ8_0 {
  uint16_t d;
  int8_t qs[kQk];
};

// 16 groups of 16: x = d * (scales[g] & 15) * q - dmin * (scales[g] >> 4),
// 2-bit q. Each 128-element half uses 32 bytes of qs; group of four bit pairs
// at shift 2s holds elements 32s .. 32s + 31 of that half.
struct [[gnu::packed]] BlockQ2_K {
  uint8_t scales[kQkK / 16];
  uint8_t qs[kQkK / 4];
  uint16_t d;
  uint16_t dmin;
};

// 16 groups of 16: x = d * (scale[g] - 32) * (q - (hmask bit set ? 0 : 4)),
// 2-bit low q laid out as in Q2_K; 6-bit scales packed in 12 bytes; hmask bit
// s of byte l is the high bit of element 32s + l.
struct [[gnu::packed]] BlockQ3_K {
  uint8_t hmask[kQkK / 8];
  uint8_t qs[kQkK / 4];
  uint8_t scales[kKScaleBytes];
  uint16_t d;
};

// 8 groups of 32: x = d * sc[g] * q - dmin * m[g], 4-bit q, 6-bit sc and m
// packed in 12 bytes (see k_scales.h). Each 64 elements use 32 bytes of qs:
// low nibbles first, then high nibbles.
struct [[gnu::packed]] BlockQ4_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[kKScaleBytes];
  uint8_t qs[kQkK / 2];
};

// As Q4_K with a fifth bit: bit 2p of qh[l] is the high bit of the low-nibble
// element l of the p-th 64, bit 2p+1 that of the high-nibble element.
struct [[gnu::packed]] BlockQ5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[kKScaleBytes];
  uint8_t qh[kQkK / 8];
  uint8_t qs[kQkK / 2];
};

// 16 groups of 16: x = d * scales[g] * (q - 32), 6-bit q: 4 low bits in ql,
// 2 high bits in qh (see the reference decoder for the interleaving).
struct [[gnu::packed]] BlockQ6_K {
  uint8_t ql[kQkK / 2];
  uint8_t qh[kQkK / 4];
  int8_t scales[kQkK / 16];
  uint16_t d;
};

// MXFP4 (OCP microscaling FP4): x = kMxfp4Values[q] * 2^(e - 128), i.e. the
// 4-bit E2M1 float q (sign bit 3; kMxfp4Values holds its value doubled, as
// ggml's kvalues_mxfp4 does) times the E8M0 block scale 2^(e - 127). Element
// j < 16 in the low nibble of qs[j], j + 16 in the high (as Q4_0). Decode the
// scale with tensor/mxfp4.h's e8m0_to_f32_half.
struct [[gnu::packed]] BlockMxfp4 {
  uint8_t e;
  uint8_t qs[kQk / 2];
};

// Twice the E2M1 values of the 16 codes: 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their
// negatives (code 8 is -0).
inline constexpr int8_t kMxfp4Values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

// IQ4_NL: x = d * kIq4Values[q], a non-linear 4-bit code; element j < 16 in
// the low nibble of qs[j], j + 16 in the high (as Q4_0).
struct [[gnu::packed]] BlockIq4Nl {
  uint16_t d;
  uint8_t qs[kQk / 2];
};

// IQ4_XS: 8 groups of 32, x = d * (ls[g] - 32) * kIq4Values[q]; the 6-bit ls[g]
// keeps its low 4 bits in nibble g % 2 of scales_l[g / 2] and its top 2 bits
// in bits 2g, 2g + 1 of scales_h. Group g's codes are qs[16g .. 16g + 15] laid
// out as an IQ4_NL block's.
struct [[gnu::packed]] BlockIq4Xs {
  uint16_t d;
  uint16_t scales_h;
  uint8_t scales_l[kQkK / 64];
  uint8_t qs[kQkK / 2];
};

// The 16 values of the IQ4 codes (ggml's kvalues_iq4nl), ascending.
inline constexpr int8_t kIq4Values[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                          1,    13,   25,  38,  53,  69,  89,  113};

// x = d * q with a float d; bsums[g] is the sum of q over group g of 16 (an
// intermediate format for dot products).
struct [[gnu::packed]] BlockQ8_K {
  float d;
  int8_t qs[kQkK];
  int16_t bsums[kQkK / 16];
};

static_assert(sizeof(BlockQ4_0) == 18 && alignof(BlockQ4_0) == 1);
static_assert(sizeof(BlockQ4_1) == 20 && alignof(BlockQ4_1) == 1);
static_assert(sizeof(BlockQ5_0) == 22 && alignof(BlockQ5_0) == 1);
static_assert(sizeof(BlockQ5_1) == 24 && alignof(BlockQ5_1) == 1);
static_assert(sizeof(BlockQ8_0) == 34 && alignof(BlockQ8_0) == 1);
static_assert(sizeof(BlockQ2_K) == 84 && alignof(BlockQ2_K) == 1);
static_assert(sizeof(BlockQ3_K) == 110 && alignof(BlockQ3_K) == 1);
static_assert(sizeof(BlockQ4_K) == 144 && alignof(BlockQ4_K) == 1);
static_assert(sizeof(BlockQ5_K) == 176 && alignof(BlockQ5_K) == 1);
static_assert(sizeof(BlockQ6_K) == 210 && alignof(BlockQ6_K) == 1);
static_assert(sizeof(BlockQ8_K) == 292 && alignof(BlockQ8_K) == 1);
static_assert(sizeof(BlockMxfp4) == 17 && alignof(BlockMxfp4) == 1);
static_assert(sizeof(BlockIq4Nl) == 18 && alignof(BlockIq4Nl) == 1);
static_assert(sizeof(BlockIq4Xs) == 136 && alignof(BlockIq4Xs) == 1);

}  // namespace met
