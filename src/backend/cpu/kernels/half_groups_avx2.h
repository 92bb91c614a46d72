// The walk the AVX2 kernels of the 16-row packed layouts share
// (matmul_x16_avx2.cc: Q8_0x16, Mxfp4x16; matmul_kx16_avx2.cc: the K-quant
// x16 layouts): a group runs as two halves of 8 rows, one int32 or float
// lane per row, each half in tiles of up to TileRows activation rows, with
// the store mask of the half's outputs inside [n_begin, n_end).
// Include only from translation units built with the AVX2 flags; always
// inlined, so no copy built for one ISA serves another.
// Threading: pure functions. Tested by tests/backend/packed_weights_test.cc.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "backend/cpu/kernels/matmul_kernels.h"

namespace met::cpu::avx2 {

inline constexpr int kHalfGroupRows = 8;

// A tile kernel: y rows [i0, i0 + its rows), outputs n0 .. n0 + 7 where the
// mask is set, from half h of the group at `group`.
using HalfTileFn = void (*)(const MatmulTask&, int64_t i0, const uint8_t* group, int h, int64_t n0, __m256i);

// The store mask of the half group whose first output is n0: the lanes of
// outputs inside [n_begin, n_end) (none: all zero).
[[gnu::always_inline]] inline __m256i half_store_mask(const MatmulTask& t, int64_t n0) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  // (No std::min/max: an inline template instantiated here would be
  // built for AVX2 flags and could be the copy the linker keeps.)
  const int64_t lo = t.n_begin > n0 ? t.n_begin - n0 : 0;
  const int64_t hi = t.n_end < n0 + kHalfGroupRows ? t.n_end - n0 : kHalfGroupRows;
  if (lo >= hi) return _mm256_setzero_si256();
  return _mm256_and_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(hi)), lane),
                          _mm256_cmpgt_epi32(lane, _mm256_set1_epi32(static_cast<int>(lo) - 1)));
}

// Every half group overlapping [n_begin, n_end), front to back; per half,
// tiles[rows - 1] over row tiles of up to TileRows activation rows.
template <int TileRows>
[[gnu::always_inline]] inline void run_half_groups(const MatmulTask& t, const HalfTileFn (&tiles)[TileRows]) {
  constexpr int kGroupRows = 2 * kHalfGroupRows;
  for (int64_t g = t.n_begin / kGroupRows; g * kGroupRows < t.n_end; ++g) {
    const uint8_t* group = t.weights + static_cast<size_t>(g) * t.weight_row_bytes;
    for (int h = 0; h < 2; ++h) {
      const int64_t n0 = g * kGroupRows + h * kHalfGroupRows;
      const __m256i store_mask = half_store_mask(t, n0);
      if (_mm256_testz_si256(store_mask, store_mask)) continue;
      for (int64_t i0 = 0; i0 < t.m; i0 += TileRows) {
        const int64_t rows = t.m - i0 < TileRows ? t.m - i0 : TileRows;
        tiles[rows - 1](t, i0, group, h, n0, store_mask);
      }
    }
  }
}

}  // namespace met::cpu::avx2
