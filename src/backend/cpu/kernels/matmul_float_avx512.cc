// AVX-512 matmul kernels for float weights: F32 and F16 (vcvtph2ps) against
// f32 activations with FMA, 16 lanes; BF16 against bf16 activations with
// vdpbf16ps, 32 products per instruction (it treats bf16 subnormals as zero
// and flushes subnormal sums: the tolerance in matmul_test.cc covers it for
// normal data). Tiles of up to 4 activation rows x 4 weight rows: 16
// accumulators, each weight vector loaded once per tile. Weight tails are
// masked loads; activation rows are zero-padded to 64 bytes (matmul.cc), so
// their tails are read whole.
// core/avx512_intrinsics.h includes the intrinsics (GCC 12's headers warn).
// Threading: pure functions. Tested by tests/backend/matmul_test.cc.
#include "core/avx512_intrinsics.h"

#include "backend/cpu/kernels/matmul_kernels.h"

namespace met::cpu::avx512 {
namespace {

// Element loaders: one vector of weights (masked) or activations from element k.
struct F32Row {
  static constexpr int kStep = 16;
  static __m512 load(const uint8_t* row, int64_t k) {
    return _mm512_loadu_ps(reinterpret_cast<const float*>(row) + k);
  }
  static __m512 load_masked(const uint8_t* row, int64_t k, int64_t remaining) {
    const auto mask = static_cast<__mmask16>((1u << remaining) - 1);
    return _mm512_maskz_loadu_ps(mask, reinterpret_cast<const float*>(row) + k);
  }
  static __m512 fma(__m512 w, __m512 x, __m512 acc) { return _mm512_fmadd_ps(w, x, acc); }
  static void prefetch(const uint8_t* row, int64_t k) {
    _mm_prefetch(reinterpret_cast<const char*>(row + 4 * k) + kPrefetchBytes, _MM_HINT_T0);
  }
};

struct F16Row {
  static constexpr int kStep = 16;
  static __m512 load(const uint8_t* row, int64_t k) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * k)));
  }
  static __m512 load_masked(const uint8_t* row, int64_t k, int64_t remaining) {
    const auto mask = static_cast<__mmask16>((1u << remaining) - 1);
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(mask, row + 2 * k));
  }
  static void prefetch(const uint8_t* row, int64_t k) {
    _mm_prefetch(reinterpret_cast<const char*>(row + 2 * k) + kPrefetchBytes, _MM_HINT_T0);
  }
};

// 32 bf16 values per vector, kept as bf16 pairs for vdpbf16ps.
struct BF16Row {
  static constexpr int kStep = 32;
  static __m512 load(const uint8_t* row, int64_t k) {
    return _mm512_castsi512_ps(_mm512_loadu_si512(row + 2 * k));
  }
  static __m512 load_masked(const uint8_t* row, int64_t k, int64_t remaining) {
    const auto mask = static_cast<__mmask32>((1ull << remaining) - 1);
    return _mm512_castsi512_ps(_mm512_maskz_loadu_epi16(mask, row + 2 * k));
  }
  static __m512 fma(__m512 w, __m512 x, __m512 acc) {
    return _mm512_dpbf16_ps(acc, (__m512bh)w, (__m512bh)x);
  }
  static void prefetch(const uint8_t* row, int64_t k) {
    _mm_prefetch(reinterpret_cast<const char*>(row + 2 * k) + kPrefetchBytes, _MM_HINT_T0);
  }
};

// F16 weights meet F32 activations: the multiply is F32's.
struct F16Weights : F16Row {
  static __m512 fma(__m512 w, __m512 x, __m512 acc) { return _mm512_fmadd_ps(w, x, acc); }
};

template <class W, class A, int R, int C>
void float_tile(const MatmulTask& t, int64_t i0, int64_t n0) {
  const uint8_t* w[C];
  const uint8_t* a[R];
  for (int c = 0; c < C; ++c) w[c] = t.weights + static_cast<size_t>(n0 + c) * t.weight_row_bytes;
  for (int r = 0; r < R; ++r) a[r] = t.act + static_cast<size_t>(i0 + r) * t.act_row_bytes;
  __m512 acc[R][C];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) acc[r][c] = _mm512_setzero_ps();
  }
  auto step = [&](const __m512 (&wv)[C], int64_t k) {
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const __m512 x = A::load(a[r], k);
#pragma GCC unroll 4
      for (int c = 0; c < C; ++c) acc[r][c] = W::fma(wv[c], x, acc[r][c]);
    }
  };
  const int64_t full = t.cols / W::kStep * W::kStep;
  for (int64_t k = 0; k < full; k += W::kStep) {
    __m512 wv[C];
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) {
      wv[c] = W::load(w[c], k);
      W::prefetch(w[c], k);
    }
    step(wv, k);
  }
  if (full < t.cols) {
    __m512 wv[C];
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) wv[c] = W::load_masked(w[c], full, t.cols - full);
    step(wv, full);
  }
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) t.y[(i0 + r) * t.y_stride + n0 + c] = _mm512_reduce_add_ps(acc[r][c]);
  }
}

constexpr int kRows = 4;
constexpr int kCols = 4;

#define MET_TILE_ROW(W, A, R) \
  float_tile<W, A, R, 1>, float_tile<W, A, R, 2>, float_tile<W, A, R, 3>, float_tile<W, A, R, 4>
#define MET_FLOAT_TILES(W, A) \
  { MET_TILE_ROW(W, A, 1), MET_TILE_ROW(W, A, 2), MET_TILE_ROW(W, A, 3), MET_TILE_ROW(W, A, 4) }

constexpr TileFn kF32Tiles[] = MET_FLOAT_TILES(F32Row, F32Row);
constexpr TileFn kF16Tiles[] = MET_FLOAT_TILES(F16Weights, F32Row);
constexpr TileFn kBF16Tiles[] = MET_FLOAT_TILES(BF16Row, BF16Row);
#undef MET_FLOAT_TILES
#undef MET_TILE_ROW

}  // namespace

void matmul_f32(const MatmulTask& task) { for_each_tile(task, {kRows, kCols, kF32Tiles}); }
void matmul_f16(const MatmulTask& task) { for_each_tile(task, {kRows, kCols, kF16Tiles}); }
void matmul_bf16(const MatmulTask& task) { for_each_tile(task, {kRows, kCols, kBF16Tiles}); }

}  // namespace met::cpu::avx512
