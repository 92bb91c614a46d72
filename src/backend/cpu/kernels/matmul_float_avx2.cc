// AVX2 + FMA matmul kernels for float weights: F32 and F16 (converted with
// F16C) against f32 activations, BF16 against bf16 activations (both widened
// to f32; their products are exact). Tiles of up to 4 activation rows x 2
// weight rows keep 8 accumulators of 8 lanes in registers; each weight vector
// is loaded once per tile and used for every row of it.
// Weight tails (cols not a multiple of 8) are read through a zero-padded copy;
// activation rows are padded to 64 bytes with zeros (matmul.cc), so their
// tails are read whole.
// Built with -march=x86-64-v3: includes only intrinsics and declarations (see
// src/tensor/kernels_avx512.cc for why). Threading: pure functions.
// Tested by tests/backend/matmul_test.cc.
#include <immintrin.h>

#include <cstring>

#include "backend/cpu/kernels/matmul_kernels.h"

namespace met::cpu::avx2 {
namespace {

constexpr int kLanes = 8;

float hsum(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_movehdup_ps(t)));
}

__m256 widen_bf16(__m128i h) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

// Element loaders: 8 values from element k of a row.
struct F32Row {
  static constexpr int kBytes = 4;
  static __m256 load(const uint8_t* row, int64_t k) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(row) + k);
  }
  static void prefetch(const uint8_t* row, int64_t k) {
    _mm_prefetch(reinterpret_cast<const char*>(row + k * kBytes) + kPrefetchBytes, _MM_HINT_T0);
  }
};
struct F16Row {
  static constexpr int kBytes = 2;
  static __m256 load(const uint8_t* row, int64_t k) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * k)));
  }
  static void prefetch(const uint8_t* row, int64_t k) {
    _mm_prefetch(reinterpret_cast<const char*>(row + k * kBytes) + kPrefetchBytes, _MM_HINT_T0);
  }
};
struct BF16Row {
  static constexpr int kBytes = 2;
  static __m256 load(const uint8_t* row, int64_t k) {
    return widen_bf16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * k)));
  }
  static void prefetch(const uint8_t* row, int64_t k) {
    _mm_prefetch(reinterpret_cast<const char*>(row + k * kBytes) + kPrefetchBytes, _MM_HINT_T0);
  }
};

template <class W, class A, int R, int C>
void float_tile(const MatmulTask& t, int64_t i0, int64_t n0) {
  const uint8_t* w[C];
  const uint8_t* a[R];
  for (int c = 0; c < C; ++c) w[c] = t.weights + static_cast<size_t>(n0 + c) * t.weight_row_bytes;
  for (int r = 0; r < R; ++r) a[r] = t.act + static_cast<size_t>(i0 + r) * t.act_row_bytes;
  __m256 acc[R][C];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps();
  }
  const int64_t full = t.cols / kLanes * kLanes;
  auto step = [&](const __m256 (&wv)[C], int64_t k) {
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const __m256 x = A::load(a[r], k);
#pragma GCC unroll 4
      for (int c = 0; c < C; ++c) acc[r][c] = _mm256_fmadd_ps(wv[c], x, acc[r][c]);
    }
  };
  for (int64_t k = 0; k < full; k += kLanes) {
    __m256 wv[C];
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) {
      wv[c] = W::load(w[c], k);
      W::prefetch(w[c], k);
    }
    step(wv, k);
  }
  if (full < t.cols) {
    // The weight tail through a zeroed copy; the activation tail is padding.
    const size_t tail_bytes = static_cast<size_t>(t.cols - full) * W::kBytes;
    __m256 wv[C];
    for (int c = 0; c < C; ++c) {
      alignas(32) uint8_t buffer[kLanes * 4] = {};
      std::memcpy(buffer, w[c] + full * W::kBytes, tail_bytes);
      wv[c] = W::load(buffer, 0);
    }
    step(wv, full);
  }
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) t.y[(i0 + r) * t.y_stride + n0 + c] = hsum(acc[r][c]);
  }
}

constexpr int kRows = 4;
constexpr int kCols = 2;

#define MET_FLOAT_TILES(W, A)                                                       \
  {                                                                                 \
    float_tile<W, A, 1, 1>, float_tile<W, A, 1, 2>, float_tile<W, A, 2, 1>,         \
        float_tile<W, A, 2, 2>, float_tile<W, A, 3, 1>, float_tile<W, A, 3, 2>,     \
        float_tile<W, A, 4, 1>, float_tile<W, A, 4, 2>,                             \
  }

constexpr TileFn kF32Tiles[] = MET_FLOAT_TILES(F32Row, F32Row);
constexpr TileFn kF16Tiles[] = MET_FLOAT_TILES(F16Row, F32Row);
constexpr TileFn kBF16Tiles[] = MET_FLOAT_TILES(BF16Row, BF16Row);
#undef MET_FLOAT_TILES

}  // namespace

void matmul_f32(const MatmulTask& task) { for_each_tile(task, {kRows, kCols, kF32Tiles}); }
void matmul_f16(const MatmulTask& task) { for_each_tile(task, {kRows, kCols, kF16Tiles}); }
void matmul_bf16(const MatmulTask& task) { for_each_tile(task, {kRows, kCols, kBF16Tiles}); }

}  // namespace met::cpu::avx2
