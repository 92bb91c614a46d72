// The tile loop the AVX-512 K-quant matmul kernels share
// (matmul_kquant_avx512.cc: Q4_K, Q5_K, IQ4_XS in groups of 32;
// matmul_kquant16_avx512.cc: Q2_K, Q3_K, Q6_K in groups of 16), over a weight
// description W with
//   using Block; static constexpr int kLanesPerScale (int16 lanes per group scale);
//   static Decoded decode(const Block&, const __m512i (&scale_index)[4]);
//   static __m512 term(const Decoded&, const BlockQ8_K&, __m512 acc).
// Tiles of up to 4 activation rows x 4 weight rows; each weight super-block is
// decoded once per tile column and used for every row.
// Include only from translation units built with the AVX-512 flags.
// Threading: pure functions. Tested by tests/backend/matmul_test.cc.
#pragma once

#include "backend/cpu/kernels/matmul_kernels.h"
#include "core/avx512_intrinsics.h"
#include "tensor/block_types.h"

namespace met::cpu::avx512 {

inline __m256i load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

inline uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  __builtin_memcpy(&v, p, sizeof(v));
  return v;
}

// Index vectors for vpermw: lane j of vector k takes element table[k][j].
inline __m512i spread_index(int k, int lanes_per_value, int values_per_vector) {
  alignas(64) int16_t idx[32];
  for (int j = 0; j < 32; ++j) idx[j] = static_cast<int16_t>(values_per_vector * k + j / lanes_per_value);
  return _mm512_load_si512(idx);
}

// acc + d_a d_w * I - d_a dmin * M for a decoded scale-and-min block (Q2_K,
// Q4_K, Q5_K): I the codes against the activation's codes, vpdpwssd'd
// against the group scales (exact in int32 lanes), M the mins against the
// activation's 16-element sums. D has codes[4], scale16[4], mins16, d, dmin.
template <class D>
[[gnu::always_inline]] inline __m512 scale_min_term(const D& w, const BlockQ8_K& a, __m512 acc) {
  __m512i isum = _mm512_setzero_si512();
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    const __m512i pairs = _mm512_maddubs_epi16(w.codes[k], _mm512_loadu_si512(a.qs + 64 * k));
    isum = _mm512_dpwssd_epi32(isum, pairs, w.scale16[k]);
  }
  const __m256i mins = _mm256_madd_epi16(load256(a.bsums), w.mins16);
  acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_set1_ps(a.d * w.d), acc);
  return _mm512_fnmadd_ps(_mm512_cvtepi32_ps(_mm512_zextsi256_si512(mins)), _mm512_set1_ps(a.d * w.dmin), acc);
}

template <class W, int R, int C>
void kquant_tile(const MatmulTask& t, int64_t i0, int64_t n0) {
  using Block = typename W::Block;
  const int64_t num_blocks = t.cols / kQkK;
  const Block* w[C];
  const BlockQ8_K* a[R];
  for (int c = 0; c < C; ++c) {
    w[c] = reinterpret_cast<const Block*>(t.weights + static_cast<size_t>(n0 + c) * t.weight_row_bytes);
  }
  for (int r = 0; r < R; ++r) {
    a[r] = reinterpret_cast<const BlockQ8_K*>(t.act + static_cast<size_t>(i0 + r) * t.act_row_bytes);
  }
  __m512i scale_index[4];
  for (int k = 0; k < 4; ++k) {
    scale_index[k] = spread_index(k, W::kLanesPerScale, 32 / W::kLanesPerScale);
  }
  __m512 acc[R][C];
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) acc[r][c] = _mm512_setzero_ps();
  }
  for (int64_t b = 0; b < num_blocks; ++b) {
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) {
      const char* ahead = reinterpret_cast<const char*>(w[c] + b) + kPrefetchBytes;
      for (size_t off = 0; off < sizeof(Block); off += 64) _mm_prefetch(ahead + off, _MM_HINT_T0);
      const auto decoded = W::decode(w[c][b], scale_index);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) acc[r][c] = W::term(decoded, a[r][b], acc[r][c]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) t.y[(i0 + r) * t.y_stride + n0 + c] = _mm512_reduce_add_ps(acc[r][c]);
  }
}

inline constexpr int kKquantRows = 4;
inline constexpr int kKquantCols = 4;

// Every tile shape of W, rows major, for for_each_tile.
template <class W>
inline constexpr TileFn kKquantTiles[kKquantRows * kKquantCols] = {
    kquant_tile<W, 1, 1>, kquant_tile<W, 1, 2>, kquant_tile<W, 1, 3>, kquant_tile<W, 1, 4>,
    kquant_tile<W, 2, 1>, kquant_tile<W, 2, 2>, kquant_tile<W, 2, 3>, kquant_tile<W, 2, 4>,
    kquant_tile<W, 3, 1>, kquant_tile<W, 3, 2>, kquant_tile<W, 3, 3>, kquant_tile<W, 3, 4>,
    kquant_tile<W, 4, 1>, kquant_tile<W, 4, 2>, kquant_tile<W, 4, 3>, kquant_tile<W, 4, 4>,
};

// Runs W's kernel over the task's outputs.
template <class W>
void kquant_matmul(const MatmulTask& task) {
  for_each_tile(task, {kKquantRows, kKquantCols, kKquantTiles<W>});
}

}  // namespace met::cpu::avx512
