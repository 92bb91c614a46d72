// AVX-512 gated delta rule pieces (gated_delta_kernels.h), 16 floats per
// vector, masked tails for any head_dim.
// step: one pass over each state row j reads it once for both dot products
// (k and q, the old state), then decays it and adds delta_j k in place; the
// output uses out_j = scale (decay M_j.q + delta_j k.q), the same value as
// reading the updated row (rounding differs from the reference). Head
// sizes 64 and 128 keep k, q and the row in registers.
// gemm: register tiles of up to 4 rows x 4 vectors (64 columns) of c, a
// broadcast from a, b's row loaded once per tile step; the tile's loops
// are unrolled by pragma so its accumulators stay in registers.
// core/avx512_intrinsics.h includes the intrinsics (GCC 12's headers warn);
// no other header with inline code (this file is built for x86-64-v4).
// Threading: pure functions. Tested by tests/backend/gated_delta_test.cc.
#include "core/avx512_intrinsics.h"

#include "backend/cpu/kernels/gated_delta_kernels.h"

namespace met::cpu::avx512 {
namespace {

// Lanes [0, remaining) of a vector; none when remaining <= 0.
__mmask16 gdn_mask(int64_t remaining) {
  if (remaining <= 0) return 0;
  return remaining >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << remaining) - 1);
}

int64_t gdn_min(int64_t a, int64_t b) { return a < b ? a : b; }

// acc[r] += a[r0 + r][x] * b[x] for each row r of the tile; with `lower`,
// rows above x (r0 + r < x) add nothing and their a is not read.
template <int kRows, int kVecs, bool kLower>
__attribute__((always_inline)) inline void tile_fma(__m512 (&acc)[kRows][kVecs], const float* a, int64_t lda,
                                                    int64_t r0, int64_t x, const __m512 (&bx)[kVecs]) {
  #pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
    const float* ar = a + (r0 + r) * lda + x;
    const __m512 ax = _mm512_set1_ps(!kLower || x <= r0 + r ? *ar : 0.0f);
    #pragma GCC unroll 8
    for (int v = 0; v < kVecs; ++v) acc[r][v] = _mm512_fmadd_ps(ax, bx[v], acc[r][v]);
  }
}

// A tile of kRows rows [r0, r0 + kRows) x kVecs vectors from column col0 of
// gated_delta_gemm's c (see GatedDeltaGemmFn).
template <int kRows, int kVecs>
void gemm_tile(int64_t r0, int64_t col0, int64_t cols, int64_t k, const float* a, int64_t lda, const float* b,
               int64_t ldb, float* c, int64_t ldc, bool accumulate, bool lower) {
  __mmask16 mask[kVecs];
  #pragma GCC unroll 8
  for (int v = 0; v < kVecs; ++v) mask[v] = gdn_mask(cols - 16 * v);
  __m512 acc[kRows][kVecs];
  #pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
    #pragma GCC unroll 8
    for (int v = 0; v < kVecs; ++v) {
      acc[r][v] = accumulate ? _mm512_maskz_loadu_ps(mask[v], c + (r0 + r) * ldc + col0 + 16 * v)
                             : _mm512_setzero_ps();
    }
  }
  // Every row of the tile sums x < full; with a lower a, row r0 + r then
  // sums up to x = r0 + r.
  const int64_t full = lower ? gdn_min(k, r0 + 1) : k;
  const int64_t end = lower ? gdn_min(k, r0 + kRows) : k;
  __m512 bx[kVecs];
  for (int64_t x = 0; x < full; ++x) {
    #pragma GCC unroll 8
    for (int v = 0; v < kVecs; ++v) bx[v] = _mm512_maskz_loadu_ps(mask[v], b + x * ldb + col0 + 16 * v);
    tile_fma<kRows, kVecs, false>(acc, a, lda, r0, x, bx);
  }
  for (int64_t x = full; x < end; ++x) {
    #pragma GCC unroll 8
    for (int v = 0; v < kVecs; ++v) bx[v] = _mm512_maskz_loadu_ps(mask[v], b + x * ldb + col0 + 16 * v);
    tile_fma<kRows, kVecs, true>(acc, a, lda, r0, x, bx);
  }
  #pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
    #pragma GCC unroll 8
    for (int v = 0; v < kVecs; ++v) _mm512_mask_storeu_ps(c + (r0 + r) * ldc + col0 + 16 * v, mask[v], acc[r][v]);
  }
}

template <int kRows>
void gemm_rows(int64_t r0, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
               int64_t ldc, bool accumulate, bool lower) {
  for (int64_t col0 = 0; col0 < n; col0 += 64) {
    const int64_t cols = gdn_min(64, n - col0);
    switch ((cols + 15) / 16) {
      case 1:
        gemm_tile<kRows, 1>(r0, col0, cols, k, a, lda, b, ldb, c, ldc, accumulate, lower);
        break;
      case 2:
        gemm_tile<kRows, 2>(r0, col0, cols, k, a, lda, b, ldb, c, ldc, accumulate, lower);
        break;
      case 3:
        gemm_tile<kRows, 3>(r0, col0, cols, k, a, lda, b, ldb, c, ldc, accumulate, lower);
        break;
      default:
        gemm_tile<kRows, 4>(r0, col0, cols, k, a, lda, b, ldb, c, ldc, accumulate, lower);
        break;
    }
  }
}

// Both sums of two vectors: {sum of a's lanes, sum of b's lanes}.
__attribute__((always_inline)) inline void reduce_pair(__m512 a, __m512 b, float* sum_a, float* sum_b) {
  // 128-bit blocks [a0 + a2, a1 + a3, b0 + b2, b1 + b3], then [A, A, B, B].
  const __m512 x = _mm512_add_ps(_mm512_shuffle_f32x4(a, b, 0x44), _mm512_shuffle_f32x4(a, b, 0xEE));
  const __m512 y = _mm512_add_ps(x, _mm512_shuffle_f32x4(x, x, 0xB1));
  const __m512 z = _mm512_add_ps(y, _mm512_permute_ps(y, 0x4E));
  const __m512 w = _mm512_add_ps(z, _mm512_permute_ps(z, 0xB1));
  *sum_a = _mm_cvtss_f32(_mm512_castps512_ps128(w));
  *sum_b = _mm_cvtss_f32(_mm512_extractf32x4_ps(w, 2));
}

// gated_delta_step for head_dim = 16 * kVecs: k and q stay in registers,
// and each state row is loaded once, used by both dot products and
// updated from the same registers.
template <int kVecs>
void step_fixed(const float* q, const float* k, const float* v, float decay, float beta, float scale, float* state,
                float* out) {
  constexpr int64_t d = 16 * kVecs;
  __m512 kk[kVecs], qq[kVecs];
  __m512 kq_acc = _mm512_setzero_ps();
  #pragma GCC unroll 8
  for (int x = 0; x < kVecs; ++x) {
    kk[x] = _mm512_loadu_ps(k + 16 * x);
    qq[x] = _mm512_loadu_ps(q + 16 * x);
    kq_acc = _mm512_fmadd_ps(kk[x], qq[x], kq_acc);
  }
  const float kq = _mm512_reduce_add_ps(kq_acc);
  const __m512 vdecay = _mm512_set1_ps(decay);
  for (int64_t j = 0; j < d; ++j) {
    float* row = state + j * d;
    __m512 s[kVecs];
    __m512 acc_k[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()};
    __m512 acc_q[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()};
    #pragma GCC unroll 8
    for (int x = 0; x < kVecs; ++x) {
      s[x] = _mm512_loadu_ps(row + 16 * x);
      acc_k[x & 1] = _mm512_fmadd_ps(s[x], kk[x], acc_k[x & 1]);
      acc_q[x & 1] = _mm512_fmadd_ps(s[x], qq[x], acc_q[x & 1]);
    }
    float sk = 0.0f, sq = 0.0f;
    reduce_pair(_mm512_add_ps(acc_k[0], acc_k[1]), _mm512_add_ps(acc_q[0], acc_q[1]), &sk, &sq);
    const float delta = beta * (v[j] - decay * sk);
    const __m512 vdelta = _mm512_set1_ps(delta);
    #pragma GCC unroll 8
    for (int x = 0; x < kVecs; ++x) {
      _mm512_storeu_ps(row + 16 * x, _mm512_fmadd_ps(s[x], vdecay, _mm512_mul_ps(vdelta, kk[x])));
    }
    out[j] = scale * (decay * sq + delta * kq);
  }
}

// gated_delta_step for any head_dim: rows in 16-float pieces, masked tail.
void step_any(const float* q, const float* k, const float* v, float decay, float beta, float scale,
              int32_t head_dim, float* state, float* out) {
  const int64_t d = head_dim;
  __m512 kq_acc = _mm512_setzero_ps();
  for (int64_t i = 0; i < d; i += 16) {
    const __mmask16 m = gdn_mask(d - i);
    kq_acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, k + i), _mm512_maskz_loadu_ps(m, q + i), kq_acc);
  }
  const float kq = _mm512_reduce_add_ps(kq_acc);
  const __m512 vdecay = _mm512_set1_ps(decay);
  for (int64_t j = 0; j < d; ++j) {
    float* row = state + j * d;
    __m512 acc_k = _mm512_setzero_ps(), acc_q = _mm512_setzero_ps();
    for (int64_t i = 0; i < d; i += 16) {
      const __mmask16 m = gdn_mask(d - i);
      const __m512 s = _mm512_maskz_loadu_ps(m, row + i);
      acc_k = _mm512_fmadd_ps(s, _mm512_maskz_loadu_ps(m, k + i), acc_k);
      acc_q = _mm512_fmadd_ps(s, _mm512_maskz_loadu_ps(m, q + i), acc_q);
    }
    float sk = 0.0f, sq = 0.0f;
    reduce_pair(acc_k, acc_q, &sk, &sq);
    const float delta = beta * (v[j] - decay * sk);
    const __m512 vdelta = _mm512_set1_ps(delta);
    for (int64_t i = 0; i < d; i += 16) {
      const __mmask16 m = gdn_mask(d - i);
      const __m512 s = _mm512_maskz_loadu_ps(m, row + i);
      const __m512 updated = _mm512_fmadd_ps(s, vdecay, _mm512_mul_ps(vdelta, _mm512_maskz_loadu_ps(m, k + i)));
      _mm512_mask_storeu_ps(row + i, m, updated);
    }
    out[j] = scale * (decay * sq + delta * kq);
  }
}

}  // namespace

void gated_delta_step(const float* q, const float* k, const float* v, float decay, float beta, float scale,
                      int32_t head_dim, float* state, float* out) {
  switch (head_dim) {
    case 64:
      step_fixed<4>(q, k, v, decay, beta, scale, state, out);
      return;
    case 128:
      step_fixed<8>(q, k, v, decay, beta, scale, state, out);
      return;
    default:
      step_any(q, k, v, decay, beta, scale, head_dim, state, out);
      return;
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

}  // namespace met::cpu::avx512
