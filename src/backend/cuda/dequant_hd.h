// Per-element decoding of the weight types the CUDA backend reads (F32,
// F16, BF16, Q8_0, Q4_K, Q6_K), on raw GGUF bytes, host and device alike: the
// GEMV kernels decode the elements their thread needs, the GEMM path turns
// tiles into BF16 first. Each function gives the very float the CPU's
// scalar reference decoder (tensor/reference/) gives for that element: the
// same products in the same order. fp16 scales convert with the hardware
// instruction on the device and tensor/half.h on the host (the same value
// for every finite or infinite input; NaN stays NaN).
// Layouts (tensor/block_types.h): Q8_0 blocks of 32 (fp16 d, 32 int8);
// Q4_K super-blocks of 256 (fp16 d, dmin, 12 bytes of 6-bit scale/min
// pairs, 128 bytes of nibbles); Q6_K super-blocks of 256 (128 bytes of low
// nibbles, 64 of high bit pairs, 16 int8 scales, fp16 d).
// REQUIRES: `row` points at the first block of a row and `i` is within it.
// Threading: pure functions. Tested by tests/backend/cuda_math_test.cc (host)
// and tests/backend/cuda_kernels_test.cc (device, label gpu).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "backend/hd.h"

#if defined(__CUDACC__)
#include <cuda_fp16.h>
#else
#include "tensor/half.h"
#endif

namespace met::cuda {

inline constexpr int kHdQk = 32;     // elements per Q8_0 block
inline constexpr int kHdQkK = 256;   // elements per K-quant super-block
inline constexpr int kHdQ8_0Bytes = 34;
inline constexpr int kHdQ4KBytes = 144;
inline constexpr int kHdQ6KBytes = 210;

MET_HD inline uint16_t hd_load_u16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | (p[1] << 8));
}

// Under nvcc (both its device and host passes) cuda_fp16.h's conversion;
// under a host compiler tensor/half.h's (C++20, which nvcc's C++17 does not
// take).
MET_HD inline float hd_fp16(uint16_t bits) {
#if defined(__CUDACC__)
  return __half2float(__ushort_as_half(bits));
#else
  return fp16_to_f32(bits);
#endif
}

MET_HD inline float hd_bf16(uint16_t bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(static_cast<uint32_t>(bits) << 16);
#elif defined(__CUDACC__)
  float f;
  const uint32_t wide = static_cast<uint32_t>(bits) << 16;
  std::memcpy(&f, &wide, sizeof(f));
  return f;
#else
  return bf16_to_f32(bits);
#endif
}

MET_HD inline float f16_element(const uint8_t* row, int64_t i) { return hd_fp16(hd_load_u16(row + 2 * i)); }
MET_HD inline float bf16_element(const uint8_t* row, int64_t i) { return hd_bf16(hd_load_u16(row + 2 * i)); }

MET_HD inline float q8_0_element(const uint8_t* row, int64_t i) {
  const uint8_t* block = row + (i / kHdQk) * kHdQ8_0Bytes;
  const auto q = static_cast<int8_t>(block[2 + i % kHdQk]);
  return static_cast<float>(q) * hd_fp16(hd_load_u16(block));
}

// Pair `pair` (0..7) of a Q4_K/Q5_K super-block's packed 6-bit scale and min
// (ggml's get_scale_min_k4; tensor/reference/k_scales.h).
struct HdScaleMin {
  int scale;
  int min;
};

MET_HD inline HdScaleMin hd_k4_scale_min(const uint8_t* packed, int pair) {
  if (pair < 4) return {packed[pair] & 63, packed[pair + 4] & 63};
  return {(packed[pair + 4] & 0x0F) | ((packed[pair - 4] >> 6) << 4),
          (packed[pair + 4] >> 4) | ((packed[pair] >> 6) << 4)};
}

// x = (d * sc) * q - dmin * m, group of 32 g = j / 32: groups 2c and 2c + 1
// share the 32 bytes qs[32c ..] (low nibbles, then high).
MET_HD inline float q4_k_element(const uint8_t* row, int64_t i) {
  const uint8_t* block = row + (i / kHdQkK) * kHdQ4KBytes;
  const int j = static_cast<int>(i % kHdQkK);
  const int group = j / 32, l = j % 32;
  const HdScaleMin sm = hd_k4_scale_min(block + 4, group);
  const uint8_t byte = block[16 + 32 * (group / 2) + l];
  const int q = group % 2 == 0 ? (byte & 0x0F) : (byte >> 4);
  const float d = hd_fp16(hd_load_u16(block)) * static_cast<float>(sm.scale);
  const float m = hd_fp16(hd_load_u16(block + 2)) * static_cast<float>(sm.min);
  return d * static_cast<float>(q) - m;
}

// x = d * scales[g16] * (q - 32): in half h = j / 128, element l + 32k
// takes the nibble k / 2 of ql[64h + l + 32 (k % 2)] and bits 2k, 2k + 1 of
// qh[32h + l]; its scale is scales[8h + l / 16 + 2k].
MET_HD inline float q6_k_element(const uint8_t* row, int64_t i) {
  const uint8_t* block = row + (i / kHdQkK) * kHdQ6KBytes;
  const int j = static_cast<int>(i % kHdQkK);
  const int half = j / 128, k = (j % 128) / 32, l = j % 32;
  const uint8_t* ql = block + 64 * half;
  const uint8_t* qh = block + 128 + 32 * half;
  const auto* scales = reinterpret_cast<const int8_t*>(block + 192) + 8 * half;
  const int nibble = (ql[l + 32 * (k % 2)] >> (4 * (k / 2))) & 0x0F;
  const int q = (nibble | (((qh[l] >> (2 * k)) & 3) << 4)) - 32;
  const float d = hd_fp16(hd_load_u16(block + 208));
  return d * static_cast<float>(scales[l / 16 + 2 * k]) * static_cast<float>(q);
}

MET_HD inline float f32_element(const uint8_t* row, int64_t i) {
  const uint8_t* p = row + 4 * i;
  const uint32_t u = static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
                     (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

// Q8_0 rows tiled at load for the GEMV (weight_tiling.h): each tile of
// 512 columns is 512 int8 in lane order, lane l's 16 bytes holding columns
// 128m + 4l + j (m, j < 4) at 16l + 4m + j, so lane l's activations are
// four float4 loads that a warp makes contiguous; then the tile's 16 fp16
// block scales, block s + 4m at slot 4s + m, so lane l's four are one
// 8-byte load at slot 4(l / 8). 544 bytes, as 16 blocks of Q8_0.
inline constexpr int kHdQ8TileCols = 512;
inline constexpr int kHdQ8TileBytes = 544;

MET_HD inline int hd_q8_tile_byte(int c) { return 16 * ((c % 128) / 4) + 4 * (c / 128) + c % 4; }
MET_HD inline int hd_q8_tile_scale_slot(int block) { return 4 * (block % 4) + block / 4; }

MET_HD inline float q8_0_tiled_element(const uint8_t* row, int64_t i) {
  const uint8_t* tile = row + (i / kHdQ8TileCols) * kHdQ8TileBytes;
  const int c = static_cast<int>(i % kHdQ8TileCols);
  const auto q = static_cast<int8_t>(tile[hd_q8_tile_byte(c)]);
  return static_cast<float>(q) * hd_fp16(hd_load_u16(tile + kHdQ8TileCols + 2 * hd_q8_tile_scale_slot(c / kHdQk)));
}

// K-quant rows tiled at load: a tile is 1024 columns (4 super-blocks),
// lane l's 32 elements e = 4m + j (m < 8, j < 4) the columns 128m + 4l + j,
// their codes in lane order (16 bytes a lane; element e's nibble at byte
// e / 2, the high one for odd e), so lane l's activations are eight
// float4 loads the warp makes contiguous. Lane l's element e sits in
// super-block m / 2.
inline constexpr int kHdKTileCols = 1024;
// Q4_K: then each lane group G = l / 8's 6-bit scales and mins as bytes
// (16 at 512 + 16G: scale of m at m, min at 8 + m; m's sub-block is
// 4(m % 2) + G of super-block m / 2), then each super-block's fp16 d and
// dmin (at 576 + 4s). 592 bytes, 16 more than 4 super-blocks.
inline constexpr int kHdQ4KTileBytes = 592;
// Q6_K: then the high 2-bit pairs (8 bytes a lane at 512 + 8l, element e's
// at byte e / 4, bits 2(e % 4)), each lane group G = l / 4's 8 int8
// scales (at 768 + 8G + m: the scale of sub-block 8(m % 2) + G of
// super-block m / 2), each super-block's fp16 d (at 832 + 2s), 8 bytes
// of padding: 848 bytes (4 super-blocks are 840), so every tile starts
// 16-byte aligned.
inline constexpr int kHdQ6KTileBytes = 848;

// Where column c (< 1024) of a K tile sits: lane, element.
MET_HD inline int hd_k_tile_lane(int c) { return (c % 128) / 4; }
MET_HD inline int hd_k_tile_element(int c) { return 4 * (c / 128) + c % 4; }

MET_HD inline int hd_k_tile_code(const uint8_t* tile, int lane, int e) {
  return (tile[16 * lane + e / 2] >> (4 * (e % 2))) & 0x0F;
}

MET_HD inline float q4_k_tiled_element(const uint8_t* row, int64_t i) {
  const uint8_t* tile = row + (i / kHdKTileCols) * kHdQ4KTileBytes;
  const int c = static_cast<int>(i % kHdKTileCols);
  const int lane = hd_k_tile_lane(c), e = hd_k_tile_element(c), m = e / 4;
  const uint8_t* scales = tile + 512 + 16 * (lane / 8);
  const uint8_t* dmin = tile + 576 + 4 * (m / 2);
  const float d = hd_fp16(hd_load_u16(dmin)) * static_cast<float>(scales[m]);
  const float min = hd_fp16(hd_load_u16(dmin + 2)) * static_cast<float>(scales[8 + m]);
  return d * static_cast<float>(hd_k_tile_code(tile, lane, e)) - min;
}

MET_HD inline float q6_k_tiled_element(const uint8_t* row, int64_t i) {
  const uint8_t* tile = row + (i / kHdKTileCols) * kHdQ6KTileBytes;
  const int c = static_cast<int>(i % kHdKTileCols);
  const int lane = hd_k_tile_lane(c), e = hd_k_tile_element(c), m = e / 4;
  const int high = (tile[512 + 8 * lane + e / 4] >> (2 * (e % 4))) & 3;
  const int q = (hd_k_tile_code(tile, lane, e) | (high << 4)) - 32;
  const auto scale = static_cast<int8_t>(tile[768 + 8 * (lane / 4) + m]);
  const float d = hd_fp16(hd_load_u16(tile + 832 + 2 * (m / 2)));
  return d * static_cast<float>(scale) * static_cast<float>(q);
}

// The weight types the CUDA backend decodes, as GGUF numbers them, and the
// layouts it tiles at load (numbers GGUF does not use).
enum class HdWeightType : int32_t { kF32 = 0, kF16 = 1, kQ8_0 = 8, kQ4_K = 12, kQ6_K = 14, kBF16 = 30,
                                    kQ8_0Tiled = 1008, kQ4_KTiled = 1012, kQ6_KTiled = 1014 };

MET_HD inline float weight_element(HdWeightType type, const uint8_t* row, int64_t i) {
  switch (type) {
    case HdWeightType::kF32: return f32_element(row, i);
    case HdWeightType::kF16: return f16_element(row, i);
    case HdWeightType::kBF16: return bf16_element(row, i);
    case HdWeightType::kQ8_0: return q8_0_element(row, i);
    case HdWeightType::kQ4_K: return q4_k_element(row, i);
    case HdWeightType::kQ6_K: return q6_k_element(row, i);
    case HdWeightType::kQ8_0Tiled: return q8_0_tiled_element(row, i);
    case HdWeightType::kQ4_KTiled: return q4_k_tiled_element(row, i);
    case HdWeightType::kQ6_KTiled: return q6_k_tiled_element(row, i);
  }
  return 0.0f;
}

// Elements per group of dot_group: a Q8_0 block, a K-quant super-block's
// sub-block, 32 consecutive elements of a float type.
inline constexpr int kHdGroup = 32;

// sum over j < 32 of element (32 g + j) of `row` times x[j], accumulated
// with fmaf in j order: the sum weight_element would give, with each
// block's scales decoded once.
MET_HD inline float dot_group(HdWeightType type, const uint8_t* row, int64_t g, const float* x) {
  float sum = 0.0f;
  switch (type) {
    case HdWeightType::kQ8_0: {
      const uint8_t* block = row + g * kHdQ8_0Bytes;
      const float d = hd_fp16(hd_load_u16(block));
      for (int j = 0; j < kHdGroup; ++j) sum = fmaf(static_cast<float>(static_cast<int8_t>(block[2 + j])) * d, x[j], sum);
      return sum;
    }
    case HdWeightType::kQ4_K: {
      const uint8_t* block = row + (g / 8) * kHdQ4KBytes;
      const int group = static_cast<int>(g % 8);
      const HdScaleMin sm = hd_k4_scale_min(block + 4, group);
      const float d = hd_fp16(hd_load_u16(block)) * static_cast<float>(sm.scale);
      const float m = hd_fp16(hd_load_u16(block + 2)) * static_cast<float>(sm.min);
      const uint8_t* qs = block + 16 + 32 * (group / 2);
      const int shift = 4 * (group % 2);
      for (int j = 0; j < kHdGroup; ++j) sum = fmaf(d * static_cast<float>((qs[j] >> shift) & 0x0F) - m, x[j], sum);
      return sum;
    }
    case HdWeightType::kQ6_K: {
      const uint8_t* block = row + (g / 8) * kHdQ6KBytes;
      const int half = static_cast<int>(g % 8) / 4, k = static_cast<int>(g % 4);
      const uint8_t* ql = block + 64 * half + 32 * (k % 2);
      const uint8_t* qh = block + 128 + 32 * half;
      const auto* scales = reinterpret_cast<const int8_t*>(block + 192) + 8 * half + 2 * k;
      const float d = hd_fp16(hd_load_u16(block + 208));
      for (int j = 0; j < kHdGroup; ++j) {
        const int q = (((ql[j] >> (4 * (k / 2))) & 0x0F) | (((qh[j] >> (2 * k)) & 3) << 4)) - 32;
        sum = fmaf(d * static_cast<float>(scales[j / 16]) * static_cast<float>(q), x[j], sum);
      }
      return sum;
    }
    case HdWeightType::kF32:
    case HdWeightType::kF16:
    case HdWeightType::kBF16:
    case HdWeightType::kQ8_0Tiled:
    case HdWeightType::kQ4_KTiled:
    case HdWeightType::kQ6_KTiled:
      for (int j = 0; j < kHdGroup; ++j) sum = fmaf(weight_element(type, row, g * kHdGroup + j), x[j], sum);
      return sum;
  }
  return sum;
}

}  // namespace met::cuda
