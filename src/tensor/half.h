// Scalar IEEE binary16 (fp16) and bfloat16 conversions, bit exact: the
// reference every vector conversion in src/tensor is checked against.
// Rounding: float -> fp16 and float -> bf16 round to nearest, ties to even;
// values past the largest finite fp16 become inf; subnormals are kept (no
// flush to zero) in both directions.
// NaN: stays NaN with its sign, keeps the top payload bits and gets the quiet
// bit set, exactly as the F16C instructions (vcvtph2ps/vcvtps2ph) do, so the
// vector paths can be compared bit for bit.
// Threading: pure functions, any thread. Tested by tests/tensor/half_test.cc.
#pragma once

#include <bit>
#include <cstdint>

namespace met {

constexpr float fp16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1Fu;
  const uint32_t mantissa = h & 0x3FFu;
  if (exponent == 0x1F) {  // inf or NaN
    const uint32_t quiet = mantissa != 0 ? 0x00400000u : 0u;
    return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13) | quiet);
  }
  if (exponent != 0) {  // normal: rebias 15 -> 127
    return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
  }
  if (mantissa == 0) return std::bit_cast<float>(sign);
  // Subnormal, mantissa * 2^-24: shift the leading one up to bit 10.
  const int shift = std::countl_zero(mantissa) - 21;
  const uint32_t normalized = (mantissa << shift) & 0x3FFu;
  const uint32_t f32_exponent = static_cast<uint32_t>(113 - shift);
  return std::bit_cast<float>(sign | (f32_exponent << 23) | (normalized << 13));
}

constexpr uint16_t f32_to_fp16(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) {  // NaN: quiet, top 10 payload bits
    return static_cast<uint16_t>(sign | 0x7E00u | ((magnitude >> 13) & 0x3FFu));
  }
  // 65520 (0x477FF000) is halfway between 65504 and 2^16; the tie goes to the
  // even neighbour, which is 2^16, so it and everything above become inf.
  if (magnitude >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);
  if (magnitude >= 0x38800000u) {  // at least 2^-14: a normal fp16
    const uint32_t rounded = magnitude + 0xFFFu + ((magnitude >> 13) & 1u);
    return static_cast<uint16_t>(sign | ((rounded >> 13) - (112u << 10)));
  }
  // Below 2^-14: a subnormal in units of 2^-24. At most 2^-25 (a tie with
  // zero at exactly 2^-25) rounds to zero.
  if (magnitude <= 0x33000000u) return sign;
  const uint32_t exponent = magnitude >> 23;  // 102..112
  const uint32_t mantissa = (magnitude & 0x7FFFFFu) | 0x800000u;
  const uint32_t shift = 126 - exponent;  // 14..24
  uint32_t units = mantissa >> shift;
  const uint32_t rest = mantissa & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  if (rest > half || (rest == half && (units & 1u) != 0)) ++units;  // 0x400 is 2^-14: still right
  return static_cast<uint16_t>(sign | units);
}

constexpr float bf16_to_f32(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

constexpr uint16_t f32_to_bf16(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) {  // NaN: keep it NaN and quiet
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  }
  // Round to nearest even; a finite value past the largest bf16 carries into
  // the exponent and becomes inf, as it must.
  return static_cast<uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

}  // namespace met
