// The packed 6-bit scale fields of the k-quants, as ggml lays them out.
// Q4_K/Q5_K: 8 (scale, min) pairs of 6 bits in 12 bytes. Pairs 0-3 sit in the
// low 6 bits of bytes 0-3 (scale) and 4-7 (min); pairs 4-7 keep their low
// 4 bits in the nibbles of bytes 8-11 (scale low, min high) and their top
// 2 bits in bits 6-7 of bytes 0-3 (scale) and 4-7 (min). ggml calls the
// reader get_scale_min_k4.
// Q3_K: 16 scales of 6 bits, stored +32. Scale g's low 4 bits are the low
// nibble of byte g (g < 8) or the high nibble of byte g - 8; its top 2 bits
// are bits 2*(g / 4) of byte 8 + g % 4.
// Invariants: pack then unpack is the identity for values < 64.
// Threading: pure functions. Tested by tests/tensor/dequantize_k_ref_test.cc
// (through the decoders) and quantize_ref_test.cc (round trips).
#pragma once

#include <cstdint>

namespace met::ref {

struct ScaleMin {
  uint8_t scale;
  uint8_t min;
};

inline ScaleMin unpack_k4_scale_min(const uint8_t* packed, int pair) {
  if (pair < 4) {
    return {static_cast<uint8_t>(packed[pair] & 63), static_cast<uint8_t>(packed[pair + 4] & 63)};
  }
  const auto scale =
      static_cast<uint8_t>((packed[pair + 4] & 0x0F) | ((packed[pair - 4] >> 6) << 4));
  const auto min = static_cast<uint8_t>((packed[pair + 4] >> 4) | ((packed[pair] >> 6) << 4));
  return {scale, min};
}

// REQUIRES: scales[i], mins[i] < 64.
inline void pack_k4_scale_mins(const uint8_t* scales, const uint8_t* mins, uint8_t* packed) {
  for (int pair = 0; pair < 4; ++pair) {
    packed[pair] = static_cast<uint8_t>(scales[pair] | ((scales[pair + 4] >> 4) << 6));
    packed[pair + 4] = static_cast<uint8_t>(mins[pair] | ((mins[pair + 4] >> 4) << 6));
    packed[pair + 8] =
        static_cast<uint8_t>((scales[pair + 4] & 0x0F) | ((mins[pair + 4] & 0x0F) << 4));
  }
}

// The signed scale of group g (0..15): the stored 6-bit value minus 32.
inline int unpack_q3_k_scale(const uint8_t* packed, int group) {
  const int low = group < 8 ? (packed[group] & 0x0F) : (packed[group - 8] >> 4);
  const int high = (packed[8 + group % 4] >> (2 * (group / 4))) & 3;
  return (low | (high << 4)) - 32;
}

// REQUIRES: stored[g] < 64 (scale g plus 32), for g < 16.
inline void pack_q3_k_scales(const uint8_t* stored, uint8_t* packed) {
  for (int i = 0; i < 12; ++i) packed[i] = 0;
  for (int group = 0; group < 16; ++group) {
    const int low = stored[group] & 0x0F;
    if (group < 8) {
      packed[group] = static_cast<uint8_t>(packed[group] | low);
    } else {
      packed[group - 8] = static_cast<uint8_t>(packed[group - 8] | (low << 4));
    }
    packed[8 + group % 4] = static_cast<uint8_t>(packed[8 + group % 4] | ((stored[group] >> 4) << (2 * (group / 4))));
  }
}

}  // namespace met::ref
