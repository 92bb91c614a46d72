// AVX2 LoRA kernels (lora_kernels.h): lora_avx512.cc's order with 8 lanes
// per vector, for F32 or F16 storage (F16 widened exactly as it is loaded,
// F16C), register-blocked over two rows at a time (16 registers); shrink's
// last partial vector of inputs is summed lane by lane, expand takes two
// panels a pass as four halves, y masked at the range's ends.
// Results agree with the reference to float rounding.
// Threading: pure functions. Tested by tests/backend/lora_kernels_test.cc.
#include <immintrin.h>

#include "backend/cpu/kernels/lora_kernels.h"
#include "tensor/half.h"

namespace met::cpu::avx2 {
namespace {

// The lanes of the 8 outputs from `first` that lie in [begin, end).
__m256i range_mask(int64_t first, int64_t begin, int64_t end) {
  const __m256i o = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int32_t>(first - begin)),
                                     _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  const __m256i in_lo = _mm256_cmpgt_epi32(o, _mm256_set1_epi32(-1));
  const __m256i in_hi = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int32_t>(end - begin)), o);
  return _mm256_and_si256(in_lo, in_hi);
}

float lora_hsum(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 h = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(h, _mm_movehdup_ps(h)));
}

// 8 values at element i of F32 or F16 storage.
template <bool F16>
__m256 load8(const void* p, int64_t i) {
  if constexpr (F16) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(p) + i)));
  } else {
    return _mm256_loadu_ps(static_cast<const float*>(p) + i);
  }
}

template <bool F16>
float load1(const void* p, int64_t i) {
  if constexpr (F16) {
    return fp16_to_f32(static_cast<const uint16_t*>(p)[i]);
  } else {
    return static_cast<const float*>(p)[i];
  }
}

// t[k0 .. k0 + n) of NR rows at once (n <= 4): a 4 × NR block of dot
// products in registers, each load of A or x used by NR or four
// multiply-adds; inputs past the last full vector are summed lane by lane.
template <bool F16, int NR>
void shrink_block(const void* a, int32_t k0, int32_t n, int64_t cols, const float* x, int64_t x_stride,
                  const int32_t* rows, float* t, int64_t t_stride) {
  int64_t ar[4];  // element offsets of the four rows of A; rows past n repeat row k0, unused
  for (int j = 0; j < 4; ++j) ar[j] = (k0 + (j < n ? j : 0)) * cols;
  const float* xr[NR];
  for (int r = 0; r < NR; ++r) xr[r] = x + rows[r] * x_stride;
  __m256 acc[4][NR];  // indexed by constants only, so it stays in registers
  for (int j = 0; j < 4; ++j) {
    for (int r = 0; r < NR; ++r) acc[j][r] = _mm256_setzero_ps();
  }
  const int64_t full = cols / 8 * 8;
  for (int64_t c = 0; c < full; c += 8) {
    __m256 xv[NR];
    for (int r = 0; r < NR; ++r) xv[r] = _mm256_loadu_ps(xr[r] + c);
    for (int j = 0; j < 4; ++j) {
      const __m256 av = load8<F16>(a, ar[j] + c);
      for (int r = 0; r < NR; ++r) acc[j][r] = _mm256_fmadd_ps(av, xv[r], acc[j][r]);
    }
  }
  for (int r = 0; r < NR; ++r) {
    float sums[4];
    for (int j = 0; j < 4; ++j) sums[j] = lora_hsum(acc[j][r]);
    for (int32_t j = 0; j < n; ++j) {
      for (int64_t c = full; c < cols; ++c) sums[j] += load1<F16>(a, ar[j] + c) * xr[r][c];
      t[rows[r] * t_stride + k0 + j] = sums[j];
    }
  }
}

template <bool F16>
void shrink(const void* a, int32_t rank, int64_t cols, const float* x, int64_t x_stride, const int32_t* rows,
            int64_t num_rows, float* t, int64_t t_stride) {
  for (int32_t k = 0; k < rank; k += 4) {
    const int32_t n = rank - k < 4 ? rank - k : 4;
    int64_t i = 0;
    for (; i + 2 <= num_rows; i += 2) shrink_block<F16, 2>(a, k, n, cols, x, x_stride, rows + i, t, t_stride);
    if (i < num_rows) shrink_block<F16, 1>(a, k, n, cols, x, x_stride, rows + i, t, t_stride);
  }
}

// Panels p0 and p0 + 1 (four halves of 8 outputs; the second panel only if
// `second`) for NR rows at once: each half loaded once for the NR rows.
// Panels are padded, so only y's lanes are masked.
template <bool F16, int NR>
void expand_block(const void* bp, int64_t p0, int64_t panel_floats, int32_t rank, bool second, const __m256i* m,
                  __m256 s, const float* t, int64_t t_stride, const int32_t* rows, float* y, int64_t y_stride) {
  __m256 acc[NR][4];  // indexed by constants only, so it stays in registers
  for (int r = 0; r < NR; ++r) {
    for (int v = 0; v < 4; ++v) acc[r][v] = _mm256_setzero_ps();
  }
  const float* tr[NR];
  for (int r = 0; r < NR; ++r) tr[r] = t + rows[r] * t_stride;
  const int64_t second_at = second ? panel_floats : 0;  // a panel out of range reads the first again, unused
  for (int32_t k = 0; k < rank; ++k) {
    const int64_t at = p0 * panel_floats + k * 16;
    const __m256 pv[4] = {load8<F16>(bp, at), load8<F16>(bp, at + 8), load8<F16>(bp, at + second_at),
                          load8<F16>(bp, at + second_at + 8)};
    for (int r = 0; r < NR; ++r) {
      const __m256 tk = _mm256_set1_ps(tr[r][k]);
      for (int v = 0; v < 4; ++v) acc[r][v] = _mm256_fmadd_ps(tk, pv[v], acc[r][v]);
    }
  }
  for (int r = 0; r < NR; ++r) {
    float* yr = y + rows[r] * y_stride + p0 * 16;
    for (int v = 0; v < 4; ++v) {
      const __m256 yv = _mm256_maskload_ps(yr + 8 * v, m[v]);
      _mm256_maskstore_ps(yr + 8 * v, m[v], _mm256_add_ps(yv, _mm256_mul_ps(s, acc[r][v])));
    }
  }
}

template <bool F16>
void expand(const void* bp, int32_t rank, float scale, const float* t, int64_t t_stride, const int32_t* rows,
            int64_t num_rows, float* y, int64_t y_stride, int64_t o_begin, int64_t o_end) {
  const __m256 s = _mm256_set1_ps(scale);
  const int64_t panel_floats = int64_t{rank} * 16;
  for (int64_t p0 = o_begin / 16; p0 * 16 < o_end; p0 += 2) {
    __m256i m[4];
    for (int v = 0; v < 4; ++v) m[v] = range_mask(p0 * 16 + 8 * v, o_begin, o_end);
    const bool second = (p0 + 1) * 16 < o_end;  // the pass's second panel is in range
    int64_t i = 0;
    for (; i + 2 <= num_rows; i += 2) {
      expand_block<F16, 2>(bp, p0, panel_floats, rank, second, m, s, t, t_stride, rows + i, y, y_stride);
    }
    if (i < num_rows) {
      expand_block<F16, 1>(bp, p0, panel_floats, rank, second, m, s, t, t_stride, rows + i, y, y_stride);
    }
  }
}

}  // namespace

void lora_shrink(const void* a, bool f16, int32_t rank, int64_t cols, const float* x, int64_t x_stride,
                 const int32_t* rows, int64_t num_rows, float* t, int64_t t_stride) {
  if (f16) return shrink<true>(a, rank, cols, x, x_stride, rows, num_rows, t, t_stride);
  shrink<false>(a, rank, cols, x, x_stride, rows, num_rows, t, t_stride);
}

void lora_expand(const void* bp, bool f16, int32_t rank, int64_t /*out_cols*/, float scale, const float* t,
                 int64_t t_stride, const int32_t* rows, int64_t num_rows, float* y, int64_t y_stride, int64_t o_begin,
                 int64_t o_end) {
  if (f16) return expand<true>(bp, rank, scale, t, t_stride, rows, num_rows, y, y_stride, o_begin, o_end);
  expand<false>(bp, rank, scale, t, t_stride, rows, num_rows, y, y_stride, o_begin, o_end);
}

}  // namespace met::cpu::avx2
