// The AMX tile driver for the 16-row packed layouts whose activations are
// ActQ8_0 (packed_weights.h: Q8_0x16, Mxfp4x16, Iq4NlX16, Q4_0x16, Q5_0x16,
// Q4_1x16, Q5_1x16), over a tile unit Tiles (amx_tiles.h: the instructions,
// or their emulation) and a block decoder D (x16_decoders_avx512.h).
// Tiles as amx_tiles.h lays them out, a group being one block: the B tile
// is the decoder's 8 operand registers (Q8_0x16's codes are loaded from the
// packed unit in place), the A tiles 16 activation rows' 32 codes of the
// block. Per block,
// tdpbsud gives each C the 16 x 16 signed dots against codes + 128; stored
// and read back in AVX-512, each dot plus the activation block's
// offset_bias is exact, and is scaled and summed with the same
// instructions, in the same order and into the same accumulator chains as
// the vector kernel (matmul_x16_avx512.cc's dot_step and block_step): a
// row's outputs are bit-identical whichever of the two computes them. So
// whole tiles of 16 activation rows go to the tile unit, up to 4 of them
// per pass over a group (a decoded block serves 64 rows), and the rows
// left over, or a call of fewer than 16, go to the vector kernel.
// Include only from translation units built with the AVX-512 flags.
// Threading: pure functions (the tile state is the calling thread's).
// Tested by tests/backend/amx_matmul_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "backend/cpu/kernels/amx_tiles.h"
#include "backend/cpu/kernels/matmul_kernels.h"
#include "backend/cpu/kernels/x16_decoders_avx512.h"
#include "core/avx512_intrinsics.h"
#include "tensor/block_types.h"

namespace met::cpu::amx_x16 {

inline constexpr int kTileRows = kAmxTileRows;
inline constexpr int kMaxPassTiles = kAmxPassTiles;

// Per pass: the C tiles as stored, and each activation row's float
// accumulators (the vector kernel's chains).
template <int kChains>
struct PassBuffers {
  alignas(64) int32_t dots[kMaxPassTiles][kTileRows][avx512::kX16GroupRows];
  alignas(64) float acc[kMaxPassTiles][kChains][kTileRows][avx512::kX16GroupRows];
  alignas(64) uint8_t codes[avx512::Q8_0x16Decoder::kBlockBytes];  // a decoded B tile
};

// The vector kernel's block step on stored dots: for each of the 16 rows i
// of a tile, acc[i] += (dot + offset_bias) x w_scale x d, and for a type
// with a min per block, + w_min x d x the activation block's sum.
template <class D>
[[gnu::always_inline]] inline void scale_tile(const int32_t (*dots)[avx512::kX16GroupRows], const uint8_t* const* tails,
                                              int64_t b, __m512 w_scale, __m512 w_min,
                                              float (*acc)[avx512::kX16GroupRows]) {
  for (int i = 0; i < kTileRows; ++i) {
    ActQ8_0Tail tail;
    std::memcpy(&tail, tails[i] + sizeof(ActQ8_0Tail) * static_cast<size_t>(b), sizeof(tail));
    const __m512i dot = _mm512_add_epi32(_mm512_load_si512(dots[i]), _mm512_set1_epi32(tail.offset_bias));
    __m512 a = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(w_scale, _mm512_set1_ps(tail.d)),
                               _mm512_load_ps(acc[i]));
    if constexpr (requires { D::mins(nullptr, 0, 0); }) {
      const auto sum = static_cast<float>(-(tail.offset_bias / 128));
      a = _mm512_fmadd_ps(w_min, _mm512_set1_ps(tail.d * sum), a);
    }
    _mm512_store_ps(acc[i], a);
  }
}

// Block k of the unit at `unit` (block b + k of the rows) for the pass's
// activation rows (their rows from `first`, tails[i] row i's tails):
// buf.acc[r][its chain] += the block's terms.
template <class Tiles, class D, int RT>
void block_pass(const MatmulTask& t, const uint8_t* first, const uint8_t* const* tails, const uint8_t* unit,
                int64_t k, int64_t unit_blocks, int64_t b, PassBuffers<D::kChains>& buf) {
  // The vector kernel's chain: block k of a full unit into chain k, a
  // partial unit's blocks into chain 0.
  const int chain = unit_blocks == D::kUnitBlocks ? static_cast<int>(k % D::kChains) : 0;
  __m512i w[8];
  const __m512 w_scale = D::decode(unit, k, unit_blocks, w);
  __m512 w_min = _mm512_setzero_ps();
  if constexpr (requires { D::mins(unit, k, unit_blocks); }) w_min = D::mins(unit, k, unit_blocks);
  const uint8_t* codes = unit + static_cast<size_t>(k) * D::kBlockBytes;
  if constexpr (!requires { D::kCodesInPlace; }) {
    for (int j = 0; j < 8; ++j) _mm512_store_si512(buf.codes + 64 * j, w[j]);
    codes = buf.codes;
  }
  Tiles::template load<kAmxBTile>(codes, 64);
  const uint8_t* a0 = first + sizeof(BlockQ8_0) * static_cast<size_t>(b + k) + sizeof(uint16_t);
  amx_tile_dots<Tiles>(a0, t.act_row_bytes, buf.dots, std::make_integer_sequence<int, RT>());
  for (int r = 0; r < RT; ++r) {
    scale_tile<D>(buf.dots[r], tails + kTileRows * r, b + k, w_scale, w_min, buf.acc[r][chain]);
  }
}

// Activation rows [i0, i0 + 16 RT) x the group at `group` (outputs n0 ..
// n0 + 15 where `mask` is set).
template <class Tiles, class D, int RT>
void pass(const MatmulTask& t, int64_t i0, const uint8_t* group, int64_t n0, __mmask16 mask,
          PassBuffers<D::kChains>& buf) {
  const int64_t num_blocks = t.cols / kQk;
  const size_t tails_at = static_cast<size_t>(num_blocks) * (sizeof(BlockQ8_0) + kQk / 4 * sizeof(int16_t));
  const uint8_t* first = t.act + static_cast<size_t>(i0) * t.act_row_bytes;
  const uint8_t* tails[RT * kTileRows];
  for (int i = 0; i < RT * kTileRows; ++i) tails[i] = first + static_cast<size_t>(i) * t.act_row_bytes + tails_at;
  std::memset(buf.acc, 0, sizeof(buf.acc));
  const uint8_t* unit = group;
  for (int64_t b = 0; b < num_blocks; b += D::kUnitBlocks, unit += D::kUnitBytes) {
    const int64_t unit_blocks = num_blocks - b < D::kUnitBlocks ? num_blocks - b : D::kUnitBlocks;
    for (int64_t k = 0; k < unit_blocks; ++k) block_pass<Tiles, D, RT>(t, first, tails, unit, k, unit_blocks, b, buf);
  }
  for (int r = 0; r < RT; ++r) {
    for (int i = 0; i < kTileRows; ++i) {
      __m512 sum = _mm512_load_ps(buf.acc[r][0][i]);
      for (int c = 1; c < D::kChains; ++c) sum = _mm512_add_ps(sum, _mm512_load_ps(buf.acc[r][c][i]));
      _mm512_mask_storeu_ps(t.y + (i0 + kTileRows * r + i) * t.y_stride + n0, mask, sum);
    }
  }
}

// The task: its whole 16-row tiles on the tile unit (configured with
// `config`), as passes of up to 4 tiles over each group: pass(RT, i0,
// group, n0, mask), RT a std::integral_constant; the rest on
// `vector_kernel` (the same layout's AVX-512 kernel, bit-identical).
template <class Tiles, class Pass>
void run_tiled(const MatmulTask& t, const TileConfig& config, MatmulKernelFn vector_kernel, const Pass& pass) {
  const int64_t tiled = t.m / kTileRows * kTileRows;
  if (tiled > 0) {
    Tiles::configure(config);
    for (int64_t g = t.n_begin / kAmxOutputRows; g * kAmxOutputRows < t.n_end; ++g) {
      const int64_t n0 = g * kAmxOutputRows;
      const int64_t lo = t.n_begin > n0 ? t.n_begin - n0 : 0;
      const int64_t hi = t.n_end < n0 + kAmxOutputRows ? t.n_end - n0 : kAmxOutputRows;
      const auto mask = static_cast<__mmask16>(((1u << hi) - 1) & ~((1u << lo) - 1));
      const uint8_t* group = t.weights + static_cast<size_t>(g) * t.weight_row_bytes;
      for (int64_t i0 = 0; i0 < tiled; i0 += kMaxPassTiles * kTileRows) {
        const int64_t tiles = (tiled - i0) / kTileRows;
        if (tiles >= 4) {
          pass(std::integral_constant<int, 4>{}, i0, group, n0, mask);
        } else if (tiles == 3) {
          pass(std::integral_constant<int, 3>{}, i0, group, n0, mask);
        } else if (tiles == 2) {
          pass(std::integral_constant<int, 2>{}, i0, group, n0, mask);
        } else {
          pass(std::integral_constant<int, 1>{}, i0, group, n0, mask);
        }
      }
    }
    Tiles::release();
  }
  if (tiled < t.m) {
    MatmulTask rest = t;
    rest.act += static_cast<size_t>(tiled) * t.act_row_bytes;
    rest.y += tiled * t.y_stride;
    rest.m = t.m - tiled;
    vector_kernel(rest);
  }
}

template <class Tiles, class D>
void run_groups(const MatmulTask& t, MatmulKernelFn vector_kernel) {
  PassBuffers<D::kChains> buf;
  run_tiled<Tiles>(t, kAmxConfig32, vector_kernel,
                   [&](auto rt, int64_t i0, const uint8_t* group, int64_t n0, __mmask16 mask) {
                     pass<Tiles, D, decltype(rt)::value>(t, i0, group, n0, mask, buf);
                   });
}

}  // namespace met::cpu::amx_x16
