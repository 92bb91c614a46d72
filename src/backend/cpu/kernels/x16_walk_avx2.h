// The walk the AVX2-family kernels of the 16-row packed layouts against
// ActQ8_0 activations share (WeightLayout::kQ8_0x16 and the others of
// matmul_x16_avx2.cc; matmul_x16_avxvnni.cc): where an activation row's
// blocks and tails are, and the tile driver over a block kernel B (static
// kUnitBlocks, kUnitBytes; step<R>(unit, k, unit_blocks, h, a, b, acc): acc[r]
// += half h's 8 rows' terms of block k of the unit, block b of activation
// row r), a group run as two halves of 8 rows in tiles of up to 4 rows.
// Include only from translation units built with the AVX2 flags or a
// superset. The helpers are always inlined and the driver's instances take
// each TU's own block types (anonymous namespaces), so no copy built for one
// ISA serves another.
// Threading: pure functions. Tested by tests/backend/packed_weights_test.cc.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#include "backend/cpu/kernels/half_groups_avx2.h"
#include "backend/cpu/kernels/matmul_kernels.h"
#include "backend/cpu/kernels/next_group_prefetch.h"
#include "tensor/block_types.h"

namespace met::cpu::avx2 {

inline constexpr int kX16GroupRows = 16;
inline constexpr int kX16TileRows = 4;

// Where an activation row's blocks and tails are.
struct ActRow {
  const uint8_t* blocks;  // BlockQ8_0 b at blocks + 34 b
  const uint8_t* tails;   // ActQ8_0Tail b at tails + 8 b
};

[[gnu::always_inline]] inline __m256i broadcast_quad(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof(v));
  return _mm256_set1_epi32(v);
}

// The codes of activation row r's block b, and the block's tail.
[[gnu::always_inline]] inline const uint8_t* act_codes(const ActRow& a, int64_t b) {
  return a.blocks + sizeof(BlockQ8_0) * static_cast<size_t>(b) + sizeof(uint16_t);
}
[[gnu::always_inline]] inline ActQ8_0Tail act_tail(const ActRow& a, int64_t b) {
  ActQ8_0Tail tail;
  std::memcpy(&tail, a.tails + sizeof(ActQ8_0Tail) * static_cast<size_t>(b), sizeof(tail));
  return tail;
}

// y rows [i0, i0 + R), outputs n0 .. n0 + 7 where `store_mask` is set, from
// half h (rows 8h .. 8h+7) of the group at `group`.
template <class B, int R>
void x16_half_tile(const MatmulTask& t, int64_t i0, const uint8_t* group, int h, int64_t n0, __m256i store_mask) {
  const int64_t num_blocks = t.cols / kQk;
  ActRow a[R];
  for (int r = 0; r < R; ++r) {
    const uint8_t* row = t.act + static_cast<size_t>(i0 + r) * t.act_row_bytes;
    a[r].blocks = row;
    a[r].tails = row + static_cast<size_t>(num_blocks) * (sizeof(BlockQ8_0) + kQk / 4 * sizeof(int16_t));
  }
  __m256 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
  // Walks: every row tile of both halves, at m = 1 too (the second half's
  // walk computes from cache: sharing measured the same for Q8_0x16 at m =
  // 1 and about 20% faster for Mxfp4x16, three alternating rounds).
  const int64_t tiles = (t.m + kX16TileRows - 1) / kX16TileRows;
  const NextGroupShare share = next_group_share(2 * tiles, h * tiles + i0 / kX16TileRows, group,
                                                t.weight_row_bytes, (n0 / kX16GroupRows + 1) * kX16GroupRows < t.n_end);
  const uint8_t* unit = group;
  for (int64_t b = 0; b < num_blocks; b += B::kUnitBlocks, unit += B::kUnitBytes) {
    prefetch_share(share, b / B::kUnitBlocks, static_cast<size_t>(unit - group), B::kUnitBytes);
    const int64_t unit_blocks = num_blocks - b < B::kUnitBlocks ? num_blocks - b : B::kUnitBlocks;
    for (int64_t k = 0; k < unit_blocks; ++k) B::template step<R>(unit, k, unit_blocks, h, a, b + k, acc);
  }
  for (int r = 0; r < R; ++r) _mm256_maskstore_ps(t.y + (i0 + r) * t.y_stride + n0, store_mask, acc[r]);
}

template <class B, int... R>
constexpr auto make_x16_tiles(std::integer_sequence<int, R...>) {
  struct Tiles {
    HalfTileFn fns[sizeof...(R)];
  };
  return Tiles{{x16_half_tile<B, R + 1>...}};
}

// One activation row (batch-1 decode): each group walked once, block by
// block, both halves together, so its cache lines stream whole in one pass,
// each unit's lines prefetched kX16OneRowPrefetchUnits units ahead. Each
// half's arithmetic is B::step's, so the outputs are those of the two half
// walks bit for bit.
inline constexpr size_t kX16OneRowPrefetchUnits = 2;

template <class B>
void x16_one_row(const MatmulTask& t) {
  const int64_t num_blocks = t.cols / kQk;
  ActRow a[1];
  a[0].blocks = t.act;
  a[0].tails = t.act + static_cast<size_t>(num_blocks) * (sizeof(BlockQ8_0) + kQk / 4 * sizeof(int16_t));
  for (int64_t g = t.n_begin / kX16GroupRows; g * kX16GroupRows < t.n_end; ++g) {
    const uint8_t* unit = t.weights + static_cast<size_t>(g) * t.weight_row_bytes;
    __m256 acc0[1] = {_mm256_setzero_ps()}, acc1[1] = {_mm256_setzero_ps()};
    for (int64_t b = 0; b < num_blocks; b += B::kUnitBlocks, unit += B::kUnitBytes) {
      for (size_t line = 0; line < B::kUnitBytes; line += 64) {
        _mm_prefetch(reinterpret_cast<const char*>(unit + kX16OneRowPrefetchUnits * B::kUnitBytes + line),
                     _MM_HINT_T0);
      }
      const int64_t unit_blocks = num_blocks - b < B::kUnitBlocks ? num_blocks - b : B::kUnitBlocks;
      for (int64_t k = 0; k < unit_blocks; ++k) {
        B::template step<1>(unit, k, unit_blocks, 0, a, b + k, acc0);
        B::template step<1>(unit, k, unit_blocks, 1, a, b + k, acc1);
      }
    }
    const int64_t n0 = g * kX16GroupRows;
    _mm256_maskstore_ps(t.y + n0, half_store_mask(t, n0), acc0[0]);
    _mm256_maskstore_ps(t.y + n0 + kHalfGroupRows, half_store_mask(t, n0 + kHalfGroupRows), acc1[0]);
  }
}

template <class B>
void run_x16_halves(const MatmulTask& t) {
  if (t.m == 1) {
    x16_one_row<B>(t);
    return;
  }
  static constexpr auto kTiles = make_x16_tiles<B>(std::make_integer_sequence<int, kX16TileRows>());
  run_half_groups(t, kTiles.fns);
}

}  // namespace met::cpu::avx2
