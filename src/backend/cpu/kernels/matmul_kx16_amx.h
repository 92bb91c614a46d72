// The AMX tile driver for the packed K-quant layouts Q4_Kx16, Q5_Kx16,
// Q6_Kx16, Q3_Kx16, Q2_Kx16 and Iq4XsX16 (packed_weights.h) against Q8_K
// activations, over a tile unit Tiles (amx_tiles.h) and a layout
// description K below. Per super-block and group of codes with one scale
// (sub-blocks of 32 for Q4_K, Q5_K and IQ4_XS; groups of 16 for Q6_K, Q3_K
// and Q2_K), the B tile is the group's decoded operands
// (kx16_decode_avx512.h, the vector kernels' own decoders: codes, or
// IQ4_XS's values + 128, as unsigned bytes) and each A tile the group's
// activation codes of 16 rows, read from the Q8_K rows in place; tdpbsud
// gives the signed dots, and AVX-512 adds each dot times its group's 16
// scales (vpmulld) to the row's int32 sum. At the super-block's end the
// mins (Q4_K, Q5_K, Q2_K) or the offset (Q6_K's 32, Q3_K's 4, IQ4_XS's 128)
// come from the activation's per-16 sums, and the float step is the vector
// kernel's (matmul_kx16_avx512.cc): the int32 sums are exact whatever their
// order, so a row's outputs are bit-identical to the vector kernel's, and
// whole 16-row tiles go to the tile unit (up to 4 a pass over a group,
// sharing each decoded group; amx_x16::run_tiled), the rest to AVX-512.
// Include only from translation units built with the AVX-512 flags.
// Threading: pure functions (the tile state is the calling thread's).
// Tested by tests/backend/amx_matmul_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#include "backend/cpu/kernels/amx_tiles.h"
#include "backend/cpu/kernels/kquant_x16_layout.h"
#include "backend/cpu/kernels/kx16_decode_avx512.h"
#include "backend/cpu/kernels/matmul_kernels.h"
#include "backend/cpu/kernels/matmul_x16_amx.h"
#include "core/avx512_intrinsics.h"
#include "tensor/block_types.h"

namespace met::cpu::amx_kx16 {

inline constexpr size_t kActQs = sizeof(float);              // BlockQ8_K::qs
inline constexpr size_t kActBsums = sizeof(float) + kQkK;    // BlockQ8_K::bsums
inline constexpr size_t kGroupBytes = 8 * kx16::kLine;       // the largest B tile

// The float step of a type with mins (Q4_K, Q5_K, Q2_K), as the vector
// kernels take it: acc + d_a d * isum - d_a dmin * msum, the 16 rows' fp16 d
// and dmin at `d` and `dmin`, the activation block at `a`.
inline __m512 scale_min_step(const uint8_t* d, const uint8_t* dmin, const uint8_t* a, __m512i isum, __m512i msum,
                             __m512 acc) {
  const __m512 da = _mm512_set1_ps(avx512::load_f32(a));
  acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_mul_ps(avx512::load_ph16(d), da), acc);
  return _mm512_fnmadd_ps(_mm512_cvtepi32_ps(msum), _mm512_mul_ps(avx512::load_ph16(dmin), da), acc);
}

// Q4_Kx16, Q5_Kx16 (F: kquant_x16_layout.h's fields): a pass is a chunk of
// 64 inputs, its groups sub-blocks 2p and 2p + 1.
template <class F>
struct ScaleMin {
  static constexpr size_t kUnitBytes = F::kUnitBytes;
  static constexpr int kPasses = 4, kPassGroups = 2;
  static constexpr const TileConfig& kConfig = kAmxConfig32;
  static void decode(const uint8_t* unit, int p, uint8_t (*codes)[kGroupBytes], __m512i (&scales)[kPassGroups]) {
    __m512i lo[8], hi[8];
    avx512::scale_min_decode<F>(unit, p, lo, hi);
    for (int j = 0; j < 8; ++j) {
      _mm512_store_si512(codes[0] + kx16::kLine * j, lo[j]);
      _mm512_store_si512(codes[1] + kx16::kLine * j, hi[j]);
    }
    scales[0] = avx512::scale_min_bytes(unit, F::kScales, 2 * p);
    scales[1] = avx512::scale_min_bytes(unit, F::kScales, 2 * p + 1);
  }
  static size_t input_of(int p, int q) { return 64 * static_cast<size_t>(p) + 32 * static_cast<size_t>(q); }
  // acc + the super-block's float step for the activation block `a`.
  static __m512 finish(const uint8_t* unit, const uint8_t* a, __m512i isum, __m512 acc) {
    __m512i msum = _mm512_setzero_si512();
    for (int s = 0; s < 8; ++s) {
      const __m512i m = avx512::scale_min_bytes(unit, F::kMins, s);
      const __m512i pairs = _mm512_or_si512(m, _mm512_slli_epi32(m, 16));  // (m, m) int16 pairs
      msum = _mm512_dpwssd_epi32(msum, pairs, avx512::bcast32(a + kActBsums + 4 * static_cast<size_t>(s)));
    }
    return scale_min_step(unit + F::kD, unit + F::kDmin, a, isum, msum, acc);
  }
};

// Q6_Kx16 and Q3_Kx16 (L: the layout's unit bytes, offsets of its scale
// pairs and d, its codes' offset as a shift, 5 for 32 or 2 for 4, and its
// decoder): pass p is half n = p / 2, q = p % 2 of the decoder, its groups
// j < 4 the 16 inputs 128n + 32j + 16q .. (group 8n + 2j + q).
template <class L>
struct PairScaled {
  static constexpr size_t kUnitBytes = L::kUnitBytes;
  static constexpr int kPasses = 4, kPassGroups = 4;
  static constexpr const TileConfig& kConfig = kAmxConfig16;
  // Scales of groups 8n + 2j, 8n + 2j + 1 as int16 pairs.
  static __m512i pairs(const uint8_t* unit, int n, int j) {
    const uint8_t* p = unit + L::kScales + 32 * static_cast<size_t>(4 * n + j);
    return _mm512_cvtepi8_epi16(_mm256_load_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static void decode(const uint8_t* unit, int p, uint8_t (*codes)[kGroupBytes], __m512i (&scales)[kPassGroups]) {
    const int n = p / 2, q = p % 2;
    __m512i w[4][4];
    L::decode(unit, n, q, w);
    for (int j = 0; j < 4; ++j) {
      for (int jj = 0; jj < 4; ++jj) _mm512_store_si512(codes[j] + kx16::kLine * jj, w[jj][j]);
      scales[j] = avx512::pair_scale(pairs(unit, n, j), q);
    }
  }
  static size_t input_of(int p, int j) {
    return 128 * static_cast<size_t>(p / 2) + 32 * static_cast<size_t>(j) + 16 * static_cast<size_t>(p % 2);
  }
  static __m512 finish(const uint8_t* unit, const uint8_t* a, __m512i isum, __m512 acc) {
    for (int n = 0; n < 2; ++n) {
      for (int j = 0; j < 4; ++j) {  // the codes' offset: -offset x scale x the group's sum
        const __m512i offset =
            _mm512_sub_epi16(_mm512_setzero_si512(), _mm512_slli_epi16(pairs(unit, n, j), L::kOffsetShift));
        isum = _mm512_dpwssd_epi32(isum, offset, avx512::bcast32(a + kActBsums + 4 * static_cast<size_t>(4 * n + j)));
      }
    }
    const __m512 da = _mm512_set1_ps(avx512::load_f32(a));
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_mul_ps(avx512::load_ph16(unit + L::kD), da), acc);
  }
};

struct Q6_KLayout {
  static constexpr size_t kUnitBytes = kx16::kQ6_KUnitBytes, kScales = kx16::kQ6_KScales, kD = kx16::kQ6_KD;
  static constexpr int kOffsetShift = 5;  // 32
  static void decode(const uint8_t* unit, int n, int q, __m512i (&w)[4][4]) { avx512::q6_k_decode(unit, n, q, w); }
};
struct Q3_KLayout {
  static constexpr size_t kUnitBytes = kx16::kQ3_KUnitBytes, kScales = kx16::kQ3_KScales, kD = kx16::kQ3_KD;
  static constexpr int kOffsetShift = 2;  // 4
  static void decode(const uint8_t* unit, int n, int q, __m512i (&w)[4][4]) { avx512::q3_k_decode(unit, n, q, w); }
};
using Q6_K = PairScaled<Q6_KLayout>;
using Q3_K = PairScaled<Q3_KLayout>;

// Q2_Kx16: Q3_Kx16's passes and groups; the scales and mins the nibbles of
// the group bytes.
struct Q2_K {
  static constexpr size_t kUnitBytes = kx16::kQ2_KUnitBytes;
  static constexpr int kPasses = 4, kPassGroups = 4;
  static constexpr const TileConfig& kConfig = kAmxConfig16;
  static void decode(const uint8_t* unit, int p, uint8_t (*codes)[kGroupBytes], __m512i (&scales)[kPassGroups]) {
    const int n = p / 2, q = p % 2;
    __m512i w[4][4];
    avx512::q2_k_decode(unit, n, q, w);
    for (int j = 0; j < 4; ++j) {
      for (int jj = 0; jj < 4; ++jj) _mm512_store_si512(codes[j] + kx16::kLine * jj, w[jj][j]);
      scales[j] = avx512::pair_scale(_mm512_and_si512(avx512::q2_k_pairs(unit, n, j), _mm512_set1_epi16(0x0F)), q);
    }
  }
  static size_t input_of(int p, int j) { return Q6_K::input_of(p, j); }
  static __m512 finish(const uint8_t* unit, const uint8_t* a, __m512i isum, __m512 acc) {
    __m512i msum = _mm512_setzero_si512();
    for (int n = 0; n < 2; ++n) {
      for (int j = 0; j < 4; ++j) {
        const __m512i mins = _mm512_srli_epi16(avx512::q2_k_pairs(unit, n, j), 4);
        msum = _mm512_dpwssd_epi32(msum, mins, avx512::bcast32(a + kActBsums + 4 * static_cast<size_t>(4 * n + j)));
      }
    }
    return scale_min_step(unit + kx16::kQ2_KD, unit + kx16::kQ2_KDmin, a, isum, msum, acc);
  }
};

// Iq4XsX16: pass g is group g (inputs 32g ..), codes the values + 128.
struct Iq4Xs {
  static constexpr size_t kUnitBytes = kx16::kIq4XsUnitBytes;
  static constexpr int kPasses = 8, kPassGroups = 1;
  static constexpr const TileConfig& kConfig = kAmxConfig32;
  static void decode(const uint8_t* unit, int g, uint8_t (*codes)[kGroupBytes], __m512i (&scales)[kPassGroups]) {
    __m512i lo[4], hi[4];
    avx512::iq4_xs_decode(unit, g, lo, hi);
    for (int i = 0; i < 4; ++i) {
      _mm512_store_si512(codes[0] + kx16::kLine * i, lo[i]);
      _mm512_store_si512(codes[0] + kx16::kLine * (4 + i), hi[i]);
    }
    scales[0] = avx512::iq4_xs_scale(unit, g);
  }
  static size_t input_of(int g, int) { return 32 * static_cast<size_t>(g); }
  static __m512 finish(const uint8_t* unit, const uint8_t* a, __m512i isum, __m512 acc) {
    for (int g = 0; g < 8; ++g) {  // the +128: -128 x scale x the group's two sums
      const __m512i pairs = avx512::iq4_xs_offset_pairs(avx512::iq4_xs_scale(unit, g));
      isum = _mm512_dpwssd_epi32(isum, pairs, avx512::bcast32(a + kActBsums + 4 * static_cast<size_t>(g)));
    }
    const __m512 da = _mm512_set1_ps(avx512::load_f32(a));
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_mul_ps(avx512::load_ph16(unit + kx16::kIq4XsD), da), acc);
  }
};

template <class K>
struct PassBuffers {
  alignas(64) int32_t dots[kAmxPassTiles][kAmxTileRows][kAmxOutputRows];
  alignas(64) int32_t isum[kAmxPassTiles][kAmxTileRows][kAmxOutputRows];
  alignas(64) float acc[kAmxPassTiles][kAmxTileRows][kAmxOutputRows];
  alignas(64) uint8_t codes[K::kPassGroups][kGroupBytes];  // the pass's B tiles
};

// isum[r] += the super-block's dots at `block` (its offset in each Q8_K
// row) times their group scales, for activation rows 16 r .. of the pass.
template <class Tiles, class K, int RT>
void super_block_dots(const MatmulTask& t, const uint8_t* first, size_t block, const uint8_t* unit,
                      PassBuffers<K>& buf) {
  std::memset(buf.isum, 0, sizeof(buf.isum));
  for (int p = 0; p < K::kPasses; ++p) {
    __m512i scales[K::kPassGroups];
    K::decode(unit, p, buf.codes, scales);
    for (int q = 0; q < K::kPassGroups; ++q) {
      Tiles::template load<kAmxBTile>(buf.codes[q], kx16::kLine);
      amx_tile_dots<Tiles>(first + block + kActQs + K::input_of(p, q), t.act_row_bytes, buf.dots,
                           std::make_integer_sequence<int, RT>());
      for (int r = 0; r < RT; ++r) {
        for (int i = 0; i < kAmxTileRows; ++i) {
          const __m512i sum = _mm512_add_epi32(_mm512_load_si512(buf.isum[r][i]),
                                               _mm512_mullo_epi32(_mm512_load_si512(buf.dots[r][i]), scales[q]));
          _mm512_store_si512(buf.isum[r][i], sum);
        }
      }
    }
  }
}

// Activation rows [i0, i0 + 16 RT) x the group at `group` (outputs n0 ..
// n0 + 15 where `mask` is set).
template <class Tiles, class K, int RT>
void pass(const MatmulTask& t, int64_t i0, const uint8_t* group, int64_t n0, __mmask16 mask, PassBuffers<K>& buf) {
  const int64_t blocks = t.cols / kQkK;
  const uint8_t* first = t.act + static_cast<size_t>(i0) * t.act_row_bytes;
  std::memset(buf.acc, 0, sizeof(buf.acc));
  const uint8_t* unit = group;
  for (int64_t b = 0; b < blocks; ++b, unit += K::kUnitBytes) {
    const size_t block = sizeof(BlockQ8_K) * static_cast<size_t>(b);
    super_block_dots<Tiles, K, RT>(t, first, block, unit, buf);
    for (int r = 0; r < RT; ++r) {
      for (int i = 0; i < kAmxTileRows; ++i) {
        const uint8_t* a = first + static_cast<size_t>(kAmxTileRows * r + i) * t.act_row_bytes + block;
        const __m512 acc = K::finish(unit, a, _mm512_load_si512(buf.isum[r][i]), _mm512_load_ps(buf.acc[r][i]));
        _mm512_store_ps(buf.acc[r][i], acc);
      }
    }
  }
  for (int r = 0; r < RT; ++r) {
    for (int i = 0; i < kAmxTileRows; ++i) {
      _mm512_mask_storeu_ps(t.y + (i0 + kAmxTileRows * r + i) * t.y_stride + n0, mask,
                            _mm512_load_ps(buf.acc[r][i]));
    }
  }
}

template <class Tiles, class K>
void run_groups(const MatmulTask& t, MatmulKernelFn vector_kernel) {
  PassBuffers<K> buf;
  amx_x16::run_tiled<Tiles>(t, K::kConfig, vector_kernel,
                            [&](auto rt, int64_t i0, const uint8_t* group, int64_t n0, __mmask16 mask) {
                              pass<Tiles, K, decltype(rt)::value>(t, i0, group, n0, mask, buf);
                            });
}

}  // namespace met::cpu::amx_kx16
