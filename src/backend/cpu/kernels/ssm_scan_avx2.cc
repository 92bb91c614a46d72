// AVX2 + FMA selective scan block (ssm_scan_kernels.h), 8 floats per
// vector, vmaskmovps only on a row's last vector when d_state is not a
// multiple of 8.
// Each state row p is held in registers, in pieces of up to 64 floats
// (8 of the 16 ymm registers; Mamba2's d_state 128 is two pieces), while it
// runs over the block's rows: per row, S = fma(B, x dt, S decay) (one
// rounding fewer than the reference's separate product and sum) and
// y_t[p] = the piece's S . C (two accumulators, then a horizontal sum;
// pieces after the first add theirs to y_t[p]), then + d x_t[p]. B and C
// rows come from L1.
// Built with -march=x86-64-v3: includes only intrinsics and declarations.
// Threading: pure function. Tested by tests/backend/ssm_scan_test.cc.
#include <immintrin.h>

#include "backend/cpu/kernels/ssm_scan_kernels.h"

namespace met::cpu::avx2 {
namespace {

constexpr int kScanMaxVecs = 8;  // vectors of a state row held in registers

// Lanes [0, remaining) set, for vmaskmovps.
__m256i scan_mask(int64_t remaining) {
  const int32_t r = remaining >= 8 ? 8 : static_cast<int32_t>(remaining < 0 ? 0 : remaining);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(r), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

float scan_hsum(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_movehdup_ps(t)));
}

// 8 floats at p: the last vector of a piece (v == kVecs - 1) masked by
// `tail` when kTail, plain otherwise.
template <int kVecs, bool kTail>
__attribute__((always_inline)) inline __m256 scan_load(const float* p, int v, __m256i tail) {
  return kTail && v == kVecs - 1 ? _mm256_maskload_ps(p, tail) : _mm256_loadu_ps(p);
}

// Columns [n0, n0 + cols) of state row p (8 (kVecs - 1) < cols <= 8 kVecs,
// == 8 kVecs unless kTail) over the block's rows. `first`: y_t[p] is this
// piece's sum (else it adds to it); `last`: d x_t[p] is added too.
template <int kVecs, bool kTail>
void scan_piece(const SsmScanBlock& blk, int64_t p, float* row, int64_t n0, int64_t cols, bool first, bool last) {
  const __m256i tail = scan_mask(cols - 8 * (kVecs - 1));
  __m256 s[kVecs];
  #pragma GCC unroll 8
  for (int v = 0; v < kVecs; ++v) s[v] = scan_load<kVecs, kTail>(row + n0 + 8 * v, v, tail);
  for (int64_t t = 0; t < blk.num_rows; ++t) {
    const float* b = blk.b + t * blk.b_stride + n0;
    const float* c = blk.c + t * blk.c_stride + n0;
    const float x = blk.x[t * blk.x_stride + p];
    const __m256 x_dt = _mm256_set1_ps(x * blk.dt[t]);
    const __m256 decay = _mm256_set1_ps(blk.decay[t]);
    __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
    #pragma GCC unroll 8
    for (int v = 0; v < kVecs; ++v) {
      s[v] = _mm256_fmadd_ps(scan_load<kVecs, kTail>(b + 8 * v, v, tail), x_dt, _mm256_mul_ps(s[v], decay));
      acc[v & 1] = _mm256_fmadd_ps(s[v], scan_load<kVecs, kTail>(c + 8 * v, v, tail), acc[v & 1]);
    }
    float* y = blk.y + t * blk.y_stride + p;
    float sum = scan_hsum(_mm256_add_ps(acc[0], acc[1]));
    if (!first) sum = *y + sum;
    *y = last ? sum + blk.d * x : sum;
  }
  #pragma GCC unroll 8
  for (int v = 0; v < kVecs; ++v) {
    if (kTail && v == kVecs - 1) {
      _mm256_maskstore_ps(row + n0 + 8 * v, tail, s[v]);
    } else {
      _mm256_storeu_ps(row + n0 + 8 * v, s[v]);
    }
  }
}

template <int kVecs>
void scan_piece_any(const SsmScanBlock& blk, int64_t p, float* row, int64_t n0, int64_t cols, bool first,
                    bool last) {
  if (cols == 8 * kVecs) {
    scan_piece<kVecs, false>(blk, p, row, n0, cols, first, last);
  } else {
    scan_piece<kVecs, true>(blk, p, row, n0, cols, first, last);
  }
}

void scan_row(const SsmScanBlock& blk, int64_t p, float* row, int32_t d_state) {
  for (int64_t n0 = 0; n0 < d_state; n0 += 8 * kScanMaxVecs) {
    const int64_t cols = d_state - n0 < 8 * kScanMaxVecs ? d_state - n0 : 8 * kScanMaxVecs;
    const bool first = n0 == 0, last = n0 + cols == d_state;
    switch ((cols + 7) / 8) {
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

}  // namespace met::cpu::avx2
