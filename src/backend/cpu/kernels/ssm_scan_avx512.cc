// AVX-512 selective scan block (ssm_scan_kernels.h), 16 floats per vector,
// a masked last vector when d_state is not a multiple of 16.
// Each state row p is held in registers, in pieces of up to 128 floats
// (8 vectors: Mamba2's d_state is 128, one piece), while it runs over the
// block's rows: per row, S = fma(B, x dt, S decay) (one rounding fewer
// than the reference's separate product and sum) and y_t[p] = the piece's
// S . C (two accumulators, then a tree reduction; pieces after the first
// add theirs to y_t[p]), then + d x_t[p]. B and C rows come from L1.
// core/avx512_intrinsics.h includes the intrinsics (GCC 12's headers warn);
// no other header with inline code (this file is built for x86-64-v4).
// Threading: pure function. Tested by tests/backend/ssm_scan_test.cc.
#include "core/avx512_intrinsics.h"

#include "backend/cpu/kernels/ssm_scan_kernels.h"

namespace met::cpu::avx512 {
namespace {

constexpr int kScanMaxVecs = 8;  // vectors of a state row held in registers

// Lanes [0, remaining) of a vector; none when remaining <= 0.
__mmask16 scan_mask(int64_t remaining) {
  if (remaining <= 0) return 0;
  return remaining >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << remaining) - 1);
}

// 16 floats at p: the last vector of a piece (v == kVecs - 1) masked by
// `tail` when kTail, plain otherwise (a mask per vector would not fit the
// seven mask registers, and the compiler would reload them every row).
template <int kVecs, bool kTail>
__attribute__((always_inline)) inline __m512 scan_load(const float* p, int v, __mmask16 tail) {
  return kTail && v == kVecs - 1 ? _mm512_maskz_loadu_ps(tail, p) : _mm512_loadu_ps(p);
}

// Columns [n0, n0 + cols) of state row p (16 (kVecs - 1) < cols <= 16 kVecs,
// == 16 kVecs unless kTail) over the block's rows. `first`: y_t[p] is this
// piece's sum (else it adds to it); `last`: d x_t[p] is added too.
template <int kVecs, bool kTail>
void scan_piece(const SsmScanBlock& blk, int64_t p, float* row, int64_t n0, int64_t cols, bool first, bool last) {
  const __mmask16 tail = scan_mask(cols - 16 * (kVecs - 1));
  __m512 s[kVecs];
  #pragma GCC unroll 8
  for (int v = 0; v < kVecs; ++v) s[v] = scan_load<kVecs, kTail>(row + n0 + 16 * v, v, tail);
  for (int64_t t = 0; t < blk.num_rows; ++t) {
    const float* b = blk.b + t * blk.b_stride + n0;
    const float* c = blk.c + t * blk.c_stride + n0;
    const float x = blk.x[t * blk.x_stride + p];
    const __m512 x_dt = _mm512_set1_ps(x * blk.dt[t]);
    const __m512 decay = _mm512_set1_ps(blk.decay[t]);
    __m512 acc[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()};
    #pragma GCC unroll 8
    for (int v = 0; v < kVecs; ++v) {
      s[v] = _mm512_fmadd_ps(scan_load<kVecs, kTail>(b + 16 * v, v, tail), x_dt, _mm512_mul_ps(s[v], decay));
      acc[v & 1] = _mm512_fmadd_ps(s[v], scan_load<kVecs, kTail>(c + 16 * v, v, tail), acc[v & 1]);
    }
    float* y = blk.y + t * blk.y_stride + p;
    float sum = _mm512_reduce_add_ps(_mm512_add_ps(acc[0], acc[1]));
    if (!first) sum = *y + sum;
    *y = last ? sum + blk.d * x : sum;
  }
  #pragma GCC unroll 8
  for (int v = 0; v < kVecs; ++v) {
    if (kTail && v == kVecs - 1) {
      _mm512_mask_storeu_ps(row + n0 + 16 * v, tail, s[v]);
    } else {
      _mm512_storeu_ps(row + n0 + 16 * v, s[v]);
    }
  }
}

template <int kVecs>
void scan_piece_any(const SsmScanBlock& blk, int64_t p, float* row, int64_t n0, int64_t cols, bool first,
                    bool last) {
  if (cols == 16 * kVecs) {
    scan_piece<kVecs, false>(blk, p, row, n0, cols, first, last);
  } else {
    scan_piece<kVecs, true>(blk, p, row, n0, cols, first, last);
  }
}

void scan_row(const SsmScanBlock& blk, int64_t p, float* row, int32_t d_state) {
  for (int64_t n0 = 0; n0 < d_state; n0 += 16 * kScanMaxVecs) {
    const int64_t cols = d_state - n0 < 16 * kScanMaxVecs ? d_state - n0 : 16 * kScanMaxVecs;
    const bool first = n0 == 0, last = n0 + cols == d_state;
    switch ((cols + 15) / 16) {
      case 1:
        scan_piece_any<1>(blk, p, row, n0, cols, first, last);
        break;
      case 2:
        scan_piece_any<2>(blk, p, row, n0, cols, first, last);
        break;
      case 3:
        scan_piece_any<3>(blk, p, row, n0, cols, first, last);
        break;
      case 4:
        scan_piece_any<4>(blk, p, row, n0, cols, first, last);
        break;
      case 5:
        scan_piece_any<5>(blk, p, row, n0, cols, first, last);
        break;
      case 6:
        scan_piece_any<6>(blk, p, row, n0, cols, first, last);
        break;
      case 7:
        scan_piece_any<7>(blk, p, row, n0, cols, first, last);
        break;
      default:
        scan_piece_any<8>(blk, p, row, n0, cols, first, last);
        break;
    }
  }
}

}  // namespace

void ssm_scan_block(const SsmScanBlock& block, int32_t head_dim, int32_t d_state, float* state) {
  for (int64_t p = 0; p < head_dim; ++p) scan_row(block, p, state + p * d_state, d_state);
}

}  // namespace met::cpu::avx512
