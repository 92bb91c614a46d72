// AVX-512 LoRA kernels (lora_kernels.h), register-blocked over the group's
// rows, for F32 or F16 storage (F16 widened exactly as it is loaded).
// Shrink: four of A's rows against four rows of x at a time (16 dot
// products in registers, 16 inputs per vector, masked at the end), each
// reduced at its end. Expand: four panels of 16 outputs (B's packed layout)
// for four rows at a time, masked at the range's ends; per row the sum over
// k is t[k] broadcast times the panel's row k (fused multiply-add), then
// y += scale · sum. Each row's arithmetic is the same whatever rows share
// its block (batch invariance); sums group differently from the reference:
// results agree to float rounding.
// An adapter is read from memory once per group of a few rows, in short
// runs between weight streams: both kernels prefetch the lines their next
// block reads, and keep masked loads out of their hot loops (GCC 12 then
// stores the accumulators back every iteration; 3-5x slower).
// bench/backend/lora_bench.cc measures them.
// core/avx512_intrinsics.h includes the intrinsics (GCC 12's headers warn).
// Threading: pure functions. Tested by tests/backend/lora_kernels_test.cc.
#include "core/avx512_intrinsics.h"

#include <algorithm>

#include "backend/cpu/kernels/lora_kernels.h"

namespace met::cpu::avx512 {
namespace {

__mmask16 tail_mask(int64_t remaining) {
  return remaining >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << remaining) - 1);
}

// 16 values at `p` (element i of F32 or F16 storage), lanes outside `m` zero.
template <bool F16>
__m512 load16(const void* p, int64_t i, __mmask16 m) {
  if constexpr (F16) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, static_cast<const uint16_t*>(p) + i));
  } else {
    return _mm512_maskz_loadu_ps(m, static_cast<const float*>(p) + i);
  }
}

// load16 of all 16 lanes. Hot loops use these plain loads: GCC keeps
// accumulators in memory across a loop with masked loads in it (it stores
// them back every iteration).
template <bool F16>
__m512 load16(const void* p, int64_t i) {
  if constexpr (F16) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(static_cast<const uint16_t*>(p) + i)));
  } else {
    return _mm512_loadu_ps(static_cast<const float*>(p) + i);
  }
}

// t[k0 .. k0 + nk) of NR rows at once (nk <= 4): a 4 × NR block of dot
// products, each load of A or x used by four or NR multiply-adds.
template <bool F16, int NR>
void shrink_block(const void* a, int32_t k0, int32_t nk, int64_t cols, const float* x, int64_t x_stride,
                  const int32_t* rows, float* t, int64_t t_stride) {
  int64_t ar[4];  // element offsets of the four rows of A
  for (int j = 0; j < 4; ++j) ar[j] = (k0 + (j < nk ? j : 0)) * cols;  // rows past nk repeat row k0, unused
  const float* xr[NR];
  for (int r = 0; r < NR; ++r) xr[r] = x + rows[r] * x_stride;
  __m512 acc[4][NR];  // indexed by constants only, so it stays in registers
  for (int j = 0; j < 4; ++j) {
    for (int r = 0; r < NR; ++r) acc[j][r] = _mm512_setzero_ps();
  }
  // The next block's rows of A follow these: fetch them as this one runs.
  constexpr int64_t kElem = F16 ? 2 : 4;
  const char* next = static_cast<const char*>(a) + (k0 + 4) * cols * kElem;
  int64_t c = 0;
  for (; c + 16 <= cols; c += 16) {
    if ((c * kElem) % 64 == 0) {
      for (int j = 0; j < 4; ++j) _mm_prefetch(next + (j * cols + c) * kElem, _MM_HINT_T0);
    }
    __m512 xv[NR];
    for (int r = 0; r < NR; ++r) xv[r] = _mm512_loadu_ps(xr[r] + c);
    for (int j = 0; j < 4; ++j) {
      const __m512 av = load16<F16>(a, ar[j] + c);
      for (int r = 0; r < NR; ++r) acc[j][r] = _mm512_fmadd_ps(av, xv[r], acc[j][r]);
    }
  }
  if (c < cols) {
    const __mmask16 m = tail_mask(cols - c);
    __m512 xv[NR];
    for (int r = 0; r < NR; ++r) xv[r] = _mm512_maskz_loadu_ps(m, xr[r] + c);
    for (int j = 0; j < 4; ++j) {
      const __m512 av = load16<F16>(a, ar[j] + c, m);
      for (int r = 0; r < NR; ++r) acc[j][r] = _mm512_fmadd_ps(av, xv[r], acc[j][r]);
    }
  }
  for (int r = 0; r < NR; ++r) {
    float sums[4];
    for (int j = 0; j < 4; ++j) sums[j] = _mm512_reduce_add_ps(acc[j][r]);
    float* tr = t + rows[r] * t_stride + k0;
    for (int j = 0; j < nk; ++j) tr[j] = sums[j];
  }
}

// Panels [p0, p0 + 4) for NR rows at once: each panel vector loaded once
// for the NR rows. Masked: lanes outside m[v] are neither read nor written
// (the range's ends); otherwise all 64 outputs are in range.
template <bool F16, int NR, bool Masked>
void expand_block(const void* bp, int64_t panel0, int64_t panel_floats, int32_t rank, const __mmask16* m, __m512 s,
                  const float* t, int64_t t_stride, const int32_t* rows, float* y, int64_t y_stride, int64_t o0) {
  __m512 acc[NR][4];  // indexed by constants only, so it stays in registers
  for (int r = 0; r < NR; ++r) {
    for (int v = 0; v < 4; ++v) acc[r][v] = _mm512_setzero_ps();
  }
  const float* tr[NR];
  for (int r = 0; r < NR; ++r) tr[r] = t + rows[r] * t_stride;
  // The block's panels are contiguous, and so are the next blocks': fetch
  // two blocks ahead as this one runs (each line is read once, by a few
  // rows; without this the loads wait on memory).
  constexpr int64_t kElem = F16 ? 2 : 4;
  constexpr int64_t kBlockBytesPerK = 4 * 16 * kElem;
  const char* ahead = static_cast<const char*>(bp) + (panel0 + 8 * panel_floats) * kElem;
  for (int32_t k = 0; k < rank; ++k) {
    for (int64_t b = 0; b < kBlockBytesPerK; b += 64) _mm_prefetch(ahead + k * kBlockBytesPerK + b, _MM_HINT_T0);
    __m512 pv[4];
    for (int v = 0; v < 4; ++v) {
      const int64_t at = panel0 + v * panel_floats + k * 16;
      pv[v] = Masked ? load16<F16>(bp, at, m[v]) : load16<F16>(bp, at);
    }
    for (int r = 0; r < NR; ++r) {
      const __m512 tk = _mm512_set1_ps(tr[r][k]);
      for (int v = 0; v < 4; ++v) acc[r][v] = _mm512_fmadd_ps(tk, pv[v], acc[r][v]);
    }
  }
  for (int r = 0; r < NR; ++r) {
    float* yr = y + rows[r] * y_stride + o0;
    for (int v = 0; v < 4; ++v) {
      if constexpr (Masked) {
        const __m512 yv = _mm512_maskz_loadu_ps(m[v], yr + 16 * v);
        _mm512_mask_storeu_ps(yr + 16 * v, m[v], _mm512_add_ps(yv, _mm512_mul_ps(s, acc[r][v])));
      } else {
        _mm512_storeu_ps(yr + 16 * v, _mm512_add_ps(_mm512_loadu_ps(yr + 16 * v), _mm512_mul_ps(s, acc[r][v])));
      }
    }
  }
}

// expand_block over all of the rows, NR at a time.
template <bool F16, bool Masked>
void expand_rows(const void* bp, int64_t panel0, int64_t panel_floats, int32_t rank, const __mmask16* m, __m512 s,
                 const float* t, int64_t t_stride, const int32_t* rows, int64_t num_rows, float* y, int64_t y_stride,
                 int64_t o0) {
  int64_t i = 0;
  for (; i + 4 <= num_rows; i += 4) {
    expand_block<F16, 4, Masked>(bp, panel0, panel_floats, rank, m, s, t, t_stride, rows + i, y, y_stride, o0);
  }
  switch (num_rows - i) {
    case 3: expand_block<F16, 3, Masked>(bp, panel0, panel_floats, rank, m, s, t, t_stride, rows + i, y, y_stride, o0);
      break;
    case 2: expand_block<F16, 2, Masked>(bp, panel0, panel_floats, rank, m, s, t, t_stride, rows + i, y, y_stride, o0);
      break;
    case 1: expand_block<F16, 1, Masked>(bp, panel0, panel_floats, rank, m, s, t, t_stride, rows + i, y, y_stride, o0);
      break;
    default: break;
  }
}

template <bool F16>
void shrink(const void* a, int32_t rank, int64_t cols, const float* x, int64_t x_stride, const int32_t* rows,
            int64_t num_rows, float* t, int64_t t_stride) {
  for (int32_t k = 0; k < rank; k += 4) {
    const int32_t nk = rank - k < 4 ? rank - k : 4;
    int64_t i = 0;
    for (; i + 4 <= num_rows; i += 4) shrink_block<F16, 4>(a, k, nk, cols, x, x_stride, rows + i, t, t_stride);
    switch (num_rows - i) {
      case 3: shrink_block<F16, 3>(a, k, nk, cols, x, x_stride, rows + i, t, t_stride); break;
      case 2: shrink_block<F16, 2>(a, k, nk, cols, x, x_stride, rows + i, t, t_stride); break;
      case 1: shrink_block<F16, 1>(a, k, nk, cols, x, x_stride, rows + i, t, t_stride); break;
      default: break;
    }
  }
}

template <bool F16>
void expand(const void* bp, int32_t rank, float scale, const float* t, int64_t t_stride, const int32_t* rows,
            int64_t num_rows, float* y, int64_t y_stride, int64_t o_begin, int64_t o_end) {
  const __m512 s = _mm512_set1_ps(scale);
  const int64_t panel_floats = int64_t{rank} * 16;
  for (int64_t p0 = o_begin / 16; p0 * 16 < o_end; p0 += 4) {
    __mmask16 m[4];
    for (int v = 0; v < 4; ++v) {
      const int64_t lo = std::max(o_begin, (p0 + v) * 16), hi = std::min(o_end, (p0 + v + 1) * 16);
      m[v] = hi > lo ? static_cast<__mmask16>(((1u << (hi - lo)) - 1) << (lo - (p0 + v) * 16)) : 0;
    }
    const int64_t panel0 = p0 * panel_floats, o0 = p0 * 16;
    if ((m[0] & m[1] & m[2] & m[3]) == 0xFFFF) {
      expand_rows<F16, false>(bp, panel0, panel_floats, rank, m, s, t, t_stride, rows, num_rows, y, y_stride, o0);
    } else {
      expand_rows<F16, true>(bp, panel0, panel_floats, rank, m, s, t, t_stride, rows, num_rows, y, y_stride, o0);
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

}  // namespace met::cpu::avx512
