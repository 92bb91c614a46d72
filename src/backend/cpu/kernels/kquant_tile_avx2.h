// The tile loop the AVX2 K-quant matmul kernels share
// (matmul_kquant_avx2.cc: Q4_K, Q5_K, IQ4_XS in groups of 32;
// matmul_kquant16_avx2.cc: Q2_K, Q3_K, Q6_K in groups of 16), over a weight
// description W with
//   using Block; static Decoded decode(const Block&);
//   static __m256 term(const Decoded&, const BlockQ8_K&) (the block's lanes).
// Tiles of up to 2 activation rows x 2 weight rows; each weight super-block is
// decoded once per tile column and used for every row.
// Include only from translation units built with the AVX2 flags.
// Threading: pure functions. Tested by tests/backend/matmul_test.cc.
#pragma once

#include <immintrin.h>

#include "backend/cpu/kernels/matmul_kernels.h"
#include "tensor/block_types.h"

namespace met::cpu::avx2 {

inline float hsum(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_movehdup_ps(t)));
}

inline __m256i load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

inline uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  __builtin_memcpy(&v, p, sizeof(v));
  return v;
}

// d_a d_w * I - d_a dmin * M, in lanes, for a decoded scale-and-min block
// (Q2_K, Q4_K, Q5_K): I the codes against the activation's codes,
// vpmaddwd'd against the group scales (exact in int32 lanes), M the mins
// against the activation's 16-element sums. D has codes[8], scale16[8],
// mins16, d, dmin.
template <class D>
[[gnu::always_inline]] inline __m256 scale_min_term(const D& w, const BlockQ8_K& a) {
  __m256i isum = _mm256_setzero_si256();
  for (int j = 0; j < 8; ++j) {
    const __m256i pairs = _mm256_maddubs_epi16(w.codes[j], load256(a.qs + 32 * j));
    isum = _mm256_add_epi32(isum, _mm256_madd_epi16(pairs, w.scale16[j]));
  }
  const __m256i mins = _mm256_madd_epi16(load256(a.bsums), w.mins16);
  const __m256 scaled = _mm256_mul_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(a.d * w.d));
  return _mm256_fnmadd_ps(_mm256_cvtepi32_ps(mins), _mm256_set1_ps(a.d * w.dmin), scaled);
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
  __m256 acc[R][C];
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps();
  }
  for (int64_t b = 0; b < num_blocks; ++b) {
    for (int c = 0; c < C; ++c) {
      const char* ahead = reinterpret_cast<const char*>(w[c] + b) + kPrefetchBytes;
      for (size_t off = 0; off < sizeof(Block); off += 64) _mm_prefetch(ahead + off, _MM_HINT_T0);
      const auto decoded = W::decode(w[c][b]);
      for (int r = 0; r < R; ++r) acc[r][c] = _mm256_add_ps(acc[r][c], W::term(decoded, a[r][b]));
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) t.y[(i0 + r) * t.y_stride + n0 + c] = hsum(acc[r][c]);
  }
}

inline constexpr int kKquantRows = 2;
inline constexpr int kKquantCols = 2;

// Every tile shape of W, rows major, for for_each_tile.
template <class W>
inline constexpr TileFn kKquantTiles[kKquantRows * kKquantCols] = {
    kquant_tile<W, 1, 1>, kquant_tile<W, 1, 2>, kquant_tile<W, 2, 1>, kquant_tile<W, 2, 2>};

// Runs W's kernel over the task's outputs.
template <class W>
void kquant_matmul(const MatmulTask& task) {
  for_each_tile(task, {kKquantRows, kKquantCols, kKquantTiles<W>});
}

}  // namespace met::cpu::avx2
