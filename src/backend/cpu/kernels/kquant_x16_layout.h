// Byte offsets inside one super-block unit of the packed K-quant layouts
// WeightLayout::kQ4_Kx16, kQ5_Kx16, kQ6_Kx16, kIq4XsX16, kQ3_Kx16 and kQ2_Kx16 (described in
// packed_weights.h), shared
// by the packer (packed_kquant.cc) and the kernels (matmul_kx16_avx512.cc,
// matmul_kx16_avx2.cc).
// Constants only, no inline code: per-ISA translation units include it.
// Threading: constants. Tested by tests/backend/packed_weights_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>

namespace met::cpu::kx16 {

inline constexpr int kRows = 16;     // weight rows per group
inline constexpr size_t kLine = 64;  // one aligned load: 16 rows x 4 bytes

// Q4_K: 32 lines of codes (line 8c + j: row r's qs[32c + 4j .. 32c + 4j + 3]
// at byte 4r), 8 x 16 scale bytes and 8 x 16 min bytes (sub-block s of row
// r at byte 16s + r), 16 fp16 d, 16 fp16 dmin: 37 lines.
inline constexpr size_t kQ4_KCodes = 0;
inline constexpr size_t kQ4_KScales = 32 * kLine;           // 2048
inline constexpr size_t kQ4_KMins = kQ4_KScales + 8 * 16;   // 2176
inline constexpr size_t kQ4_KD = kQ4_KMins + 8 * 16;        // 2304
inline constexpr size_t kQ4_KDmin = kQ4_KD + 2 * kRows;     // 2336
inline constexpr size_t kQ4_KUnitBytes = kQ4_KDmin + 2 * kRows;  // 2368

// Q5_K: Q4_K's unit with 8 lines of qh after the codes (line i: row r's
// qh[4i .. 4i + 3] at byte 4r): 45 lines.
inline constexpr size_t kQ5_KCodes = 0;
inline constexpr size_t kQ5_KQh = 32 * kLine;              // 2048
inline constexpr size_t kQ5_KScales = kQ5_KQh + 8 * kLine;  // 2560
inline constexpr size_t kQ5_KMins = kQ5_KScales + 8 * 16;   // 2688
inline constexpr size_t kQ5_KD = kQ5_KMins + 8 * 16;        // 2816
inline constexpr size_t kQ5_KDmin = kQ5_KD + 2 * kRows;     // 2848
inline constexpr size_t kQ5_KUnitBytes = kQ5_KDmin + 2 * kRows;  // 2880

// Q6_K: 32 lines of ql (line j: row r's ql[4j .. 4j + 3] at byte 4r), 16
// lines of qh (line i: row r's qh[4i .. 4i + 3]), 256 scale bytes (scales[2p]
// and scales[2p + 1] of row r at bytes 32p + 2r, 32p + 2r + 1), 16 fp16 d,
// 32 zero bytes: 53 lines.
inline constexpr size_t kQ6_KQl = 0;
inline constexpr size_t kQ6_KQh = 32 * kLine;               // 2048
inline constexpr size_t kQ6_KScales = kQ6_KQh + 16 * kLine;  // 3072
inline constexpr size_t kQ6_KD = kQ6_KScales + 16 * kRows;  // 3328
inline constexpr size_t kQ6_KUnitBytes = kQ6_KD + 2 * kRows + 32;  // 3392

// IQ4_XS: 32 lines of codes (line 4g + i: row r's qs[16g + 4i .. 16g + 4i +
// 3] at byte 4r, so its low nibbles are elements 32g + 4i .. +3 of group g and
// its high ones 32g + 16 + 4i .. +3), 8 x 16 scale bytes (group g of row r,
// ls - 32 as int8, at byte 16g + r), 16 fp16 d, 32 zero bytes: 35 lines.
inline constexpr size_t kIq4XsCodes = 0;
inline constexpr size_t kIq4XsScales = 32 * kLine;              // 2048
inline constexpr size_t kIq4XsD = kIq4XsScales + 8 * 16;        // 2176
inline constexpr size_t kIq4XsUnitBytes = kIq4XsD + 2 * kRows + 32;  // 2240

// Q3_K: 16 lines of qs (line k: row r's qs[4k .. 4k + 3] at byte 4r), 8
// lines of hmask (line i: row r's hmask[4i .. 4i + 3]), 256 scale bytes
// (scale - 32 as int8, groups 2p and 2p + 1 of row r at bytes 32p + 2r,
// 32p + 2r + 1, as Q6_K's), 16 fp16 d, 32 zero bytes: 29 lines.
inline constexpr size_t kQ3_KQs = 0;
inline constexpr size_t kQ3_KHmask = 16 * kLine;              // 1024
inline constexpr size_t kQ3_KScales = kQ3_KHmask + 8 * kLine;  // 1536
inline constexpr size_t kQ3_KD = kQ3_KScales + 16 * kRows;    // 1792
inline constexpr size_t kQ3_KUnitBytes = kQ3_KD + 2 * kRows + 32;  // 1856

// A Q4_Kx16 or Q5_Kx16 unit's fields by name, for the kernels templated on
// either (kQh = 0: no fifth bit).
struct Q4_KFields {
  static constexpr size_t kCodes = kQ4_KCodes, kQh = 0, kScales = kQ4_KScales;
  static constexpr size_t kMins = kQ4_KMins, kD = kQ4_KD, kDmin = kQ4_KDmin;
  static constexpr size_t kUnitBytes = kQ4_KUnitBytes;
};
struct Q5_KFields {
  static constexpr size_t kCodes = kQ5_KCodes, kQh = kQ5_KQh, kScales = kQ5_KScales;
  static constexpr size_t kMins = kQ5_KMins, kD = kQ5_KD, kDmin = kQ5_KDmin;
  static constexpr size_t kUnitBytes = kQ5_KUnitBytes;
};

// Q2_K: 16 lines of qs (line k: row r's qs[4k .. 4k + 3] at byte 4r, as
// Q3_K's), the 16 group bytes (scale in the low nibble, min in the high) in
// pairs (groups 2p, 2p + 1 of row r at bytes 32p + 2r, + 1), 16 fp16 d, 16
// fp16 dmin: 21 lines.
inline constexpr size_t kQ2_KQs = 0;
inline constexpr size_t kQ2_KScales = 16 * kLine;             // 1024
inline constexpr size_t kQ2_KD = kQ2_KScales + 16 * kRows;    // 1280
inline constexpr size_t kQ2_KDmin = kQ2_KD + 2 * kRows;       // 1312
inline constexpr size_t kQ2_KUnitBytes = kQ2_KDmin + 2 * kRows;  // 1344

static_assert(kQ4_KUnitBytes % kLine == 0 && kQ5_KUnitBytes % kLine == 0 && kQ6_KUnitBytes % kLine == 0 &&
              kIq4XsUnitBytes % kLine == 0 && kQ3_KUnitBytes % kLine == 0 && kQ2_KUnitBytes % kLine == 0);

}  // namespace met::cpu::kx16
