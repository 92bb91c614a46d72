// AVX2 + FMA gated delta rule pieces (gated_delta_kernels.h), 8 floats per
// vector, vmaskmovps tails for any head_dim.
// step: one pass over each state row j reads it once for both dot products
// (k and q, the old state), then decays it and adds delta_j k in place; the
// output uses out_j = scale (decay M_j.q + delta_j k.q), the same value as
// reading the updated row (rounding differs from the reference).
// gemm: register tiles of up to 4 rows x 2 vectors (16 columns) of c, a
// broadcast from a, b's row loaded once per tile step; the tile's loops
// are unrolled by pragma so its accumulators stay in registers.
// Built with -march=x86-64-v3: includes only intrinsics and declarations.
// Threading: pure functions. Tested by tests/backend/gated_delta_test.cc.
#include <immintrin.h>

#include "backend/cpu/kernels/gated_delta_kernels.h"

namespace met::cpu::avx2 {
namespace {

// Lanes [0, remaining) set, for vmaskmovps.
__m256i gdn_mask(int64_t remaining) {
  const int32_t r = remaining >= 8 ? 8 : static_cast<int32_t>(remaining < 0 ? 0 : remaining);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(r), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

float gdn_hsum(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_movehdup_ps(t)));
}

int64_t gdn_min(int64_t a, int64_t b) { return a < b ? a : b; }

// 8 floats from p + i: plain below `full`, masked by `tail` past it
// (vmaskmovps is slow to store and slower to load than vmovups).
__attribute__((always_inline)) inline __m256 load8(const float* p, int64_t i, int64_t full, __m256i tail) {
  return i < full ? _mm256_loadu_ps(p + i) : _mm256_maskload_ps(p + i, tail);
}

// acc[r] += a[r0 + r][x] * b[x] for each row r of the tile; with `lower`,
// rows above x (r0 + r < x) add nothing and their a is not read.
template <int kRows, int kVecs, bool kLower>
__attribute__((always_inline)) inline void tile_fma(__m256 (&acc)[kRows][kVecs], const float* a, int64_t lda,
                                                    int64_t r0, int64_t x, const __m256 (&bx)[kVecs]) {
  #pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
    const float* ar = a + (r0 + r) * lda + x;
    const __m256 ax = _mm256_set1_ps(!kLower || x <= r0 + r ? *ar : 0.0f);
    #pragma GCC unroll 8
    for (int v = 0; v < kVecs; ++v) acc[r][v] = _mm256_fmadd_ps(ax, bx[v], acc[r][v]);
  }
}

// A tile of kRows rows [r0, r0 + kRows) x kVecs vectors from column col0 of
// gated_delta_gemm's c (see GatedDeltaGemmFn).
template <int kRows, int kVecs>
void gemm_tile(int64_t r0, int64_t col0, int64_t cols, int64_t k, const float* a, int64_t lda, const float* b,
               int64_t ldb, float* c, int64_t ldc, bool accumulate, bool lower) {
  __m256i mask[kVecs];
  #pragma GCC unroll 8
  for (int v = 0; v < kVecs; ++v) mask[v] = gdn_mask(cols - 8 * v);
  __m256 acc[kRows][kVecs];
  #pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
    #pragma GCC unroll 8
    for (int v = 0; v < kVecs; ++v) {
      acc[r][v] = accumulate ? _mm256_maskload_ps(c + (r0 + r) * ldc + col0 + 8 * v, mask[v]) : _mm256_setzero_ps();
    }
  }
  // Every row of the tile sums x < full; with a lower a, row r0 + r then
  // sums up to x = r0 + r.
  const int64_t full = lower ? gdn_min(k, r0 + 1) : k;
  const int64_t end = lower ? gdn_min(k, r0 + kRows) : k;
  const bool whole = cols == 8 * kVecs;
  __m256 bx[kVecs];
  auto load_b = [&](int64_t x) {
    #pragma GCC unroll 8
    for (int v = 0; v < kVecs; ++v) {
      const float* p = b + x * ldb + col0 + 8 * v;
      bx[v] = whole ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, mask[v]);
    }
  };
  for (int64_t x = 0; x < full; ++x) {
    load_b(x);
    tile_fma<kRows, kVecs, false>(acc, a, lda, r0, x, bx);
  }
  for (int64_t x = full; x < end; ++x) {
    load_b(x);
    tile_fma<kRows, kVecs, true>(acc, a, lda, r0, x, bx);
  }
  #pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
    #pragma GCC unroll 8
    for (int v = 0; v < kVecs; ++v) {
      float* p = c + (r0 + r) * ldc + col0 + 8 * v;
      if (whole) {
        _mm256_storeu_ps(p, acc[r][v]);
      } else {
        _mm256_maskstore_ps(p, mask[v], acc[r][v]);
      }
    }
  }
}

template <int kRows>
void gemm_rows(int64_t r0, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
               int64_t ldc, bool accumulate, bool lower) {
  for (int64_t col0 = 0; col0 < n; col0 += 16) {
    const int64_t cols = gdn_min(16, n - col0);
    if (cols > 8) {
      gemm_tile<kRows, 2>(r0, col0, cols, k, a, lda, b, ldb, c, ldc, accumulate, lower);
    } else {
      gemm_tile<kRows, 1>(r0, col0, cols, k, a, lda, b, ldb, c, ldc, accumulate, lower);
    }
  }
}

}  // namespace

void gated_delta_step(const float* q, const float* k, const float* v, float decay, float beta, float scale,
                      int32_t head_dim, float* state, float* out) {
  const int64_t d = head_dim, full = d / 8 * 8;  // [full, d): the masked tail
  const __m256i tail = gdn_mask(d - full);
  __m256 kq_acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < d; i += 8) {
    kq_acc = _mm256_fmadd_ps(load8(k, i, full, tail), load8(q, i, full, tail), kq_acc);
  }
  const float kq = gdn_hsum(kq_acc);
  const __m256 vdecay = _mm256_set1_ps(decay);
  for (int64_t j = 0; j < d; ++j) {
    float* row = state + j * d;
    __m256 acc_k = _mm256_setzero_ps(), acc_q = _mm256_setzero_ps();
    for (int64_t i = 0; i < d; i += 8) {
      const __m256 s = load8(row, i, full, tail);
      acc_k = _mm256_fmadd_ps(s, load8(k, i, full, tail), acc_k);
      acc_q = _mm256_fmadd_ps(s, load8(q, i, full, tail), acc_q);
    }
    const float delta = beta * (v[j] - decay * gdn_hsum(acc_k));
    const __m256 vdelta = _mm256_set1_ps(delta);
    for (int64_t i = 0; i < full; i += 8) {
      const __m256 updated = _mm256_fmadd_ps(_mm256_loadu_ps(row + i), vdecay,
                                             _mm256_mul_ps(vdelta, _mm256_loadu_ps(k + i)));
      _mm256_storeu_ps(row + i, updated);
    }
    if (full < d) {
      const __m256 updated = _mm256_fmadd_ps(_mm256_maskload_ps(row + full, tail), vdecay,
                                             _mm256_mul_ps(vdelta, _mm256_maskload_ps(k + full, tail)));
      _mm256_maskstore_ps(row + full, tail, updated);
    }
    out[j] = scale * (decay * gdn_hsum(acc_q) + delta * kq);
  }
}

void gated_delta_gemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                      float* c, int64_t ldc, bool accumulate, bool lower) {
  int64_t r0 = 0;
  for (; r0 + 4 <= m; r0 += 4) gemm_rows<4>(r0, n, k, a, lda, b, ldb, c, ldc, accumulate, lower);
  switch (m - r0) {
    case 3:
      gemm_rows<3>(r0, n, k, a, lda, b, ldb, c, ldc, accumulate, lower);
      break;
    case 2:
      gemm_rows<2>(r0, n, k, a, lda, b, ldb, c, ldc, accumulate, lower);
      break;
    case 1:
      gemm_rows<1>(r0, n, k, a, lda, b, ldb, c, ldc, accumulate, lower);
      break;
    default:
      break;
  }
}

}  // namespace met::cpu::avx2
