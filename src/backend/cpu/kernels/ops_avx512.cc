// AVX-512 row kernels for ops.h, 16 floats per vector, masked tails.
// add and rope_rotate are bit for bit the reference (same operations, no
// contraction: met_backend builds with -ffp-contract=off). rms_norm,
// rms_norm_gated, l2_norm and softmax sum in float lanes; swiglu, swiglu_oai,
// rms_norm_gated's silu and softmax use core/vector_exp.h's exp_avx512
// (within 2e-7 relative of std::exp). ops_test.cc states the tolerances.
// core/avx512_intrinsics.h includes the intrinsics (GCC 12's headers warn).
// Threading: pure functions. Tested by tests/backend/ops_test.cc.
#include "core/avx512_intrinsics.h"

#include "backend/cpu/kernels/ops_kernels.h"
#include "core/vector_exp.h"

namespace met::cpu::avx512 {
namespace {

// Lanes [0, remaining) of a vector; none when remaining <= 0.
__mmask16 tail_mask(int64_t remaining) {
  if (remaining <= 0) return 0;
  return remaining >= 16 ? static_cast<__mmask16>(0xFFFF)
                         : static_cast<__mmask16>((1u << remaining) - 1);
}

}  // namespace

void rms_norm(const float* x, const float* weight, int64_t n, float eps, float* out) {
  __m512 acc = _mm512_setzero_ps();
  for (int64_t i = 0; i < n; i += 16) {
    const __m512 v = _mm512_maskz_loadu_ps(tail_mask(n - i), x + i);
    acc = _mm512_fmadd_ps(v, v, acc);
  }
  const float mean = _mm512_reduce_add_ps(acc) / static_cast<float>(n);
  const __m512 scale = _mm512_set1_ps(1.0f / _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(mean + eps))));
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 mask = tail_mask(n - i);
    const __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(mask, x + i), scale);
    _mm512_mask_storeu_ps(out + i, mask, _mm512_mul_ps(v, _mm512_maskz_loadu_ps(mask, weight + i)));
  }
}

void rms_norm_gated(const float* x, const float* weight, const float* z, int64_t n, float eps, float* out) {
  __m512 acc = _mm512_setzero_ps();
  for (int64_t i = 0; i < n; i += 16) {
    const __m512 v = _mm512_maskz_loadu_ps(tail_mask(n - i), x + i);
    acc = _mm512_fmadd_ps(v, v, acc);
  }
  const float mean = _mm512_reduce_add_ps(acc) / static_cast<float>(n);
  const __m512 scale = _mm512_set1_ps(1.0f / _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(mean + eps))));
  const __m512 one = _mm512_set1_ps(1.0f);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 mask = tail_mask(n - i);
    const __m512 g = _mm512_maskz_loadu_ps(mask, z + i);
    const __m512 gate = _mm512_div_ps(g, _mm512_add_ps(one, exp_avx512(_mm512_sub_ps(_mm512_setzero_ps(), g))));
    const __m512 v = _mm512_mul_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(mask, x + i), scale),
                                   _mm512_maskz_loadu_ps(mask, weight + i));
    _mm512_mask_storeu_ps(out + i, mask, _mm512_mul_ps(v, gate));
  }
}

void l2_norm(float* x, int64_t n, float eps) {
  __m512 acc = _mm512_setzero_ps();
  for (int64_t i = 0; i < n; i += 16) {
    const __m512 v = _mm512_maskz_loadu_ps(tail_mask(n - i), x + i);
    acc = _mm512_fmadd_ps(v, v, acc);
  }
  const float norm = _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(_mm512_reduce_add_ps(acc))));
  const __m512 scale = _mm512_set1_ps(1.0f / (norm > eps ? norm : eps));
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 mask = tail_mask(n - i);
    _mm512_mask_storeu_ps(x + i, mask, _mm512_mul_ps(_mm512_maskz_loadu_ps(mask, x + i), scale));
  }
}

void rope_rotate(float* x, int32_t num_heads, int32_t head_dim, int32_t rope_dims, bool neox,
                 const float* cos_sin) {
  const int32_t half = rope_dims / 2;
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  for (int32_t h = 0; h < num_heads; ++h) {
    float* head = x + static_cast<int64_t>(h) * head_dim;
    if (neox) {
      for (int32_t i = 0; i < half; i += 16) {
        const __mmask16 mask = tail_mask(half - i);
        const int32_t table_floats = 2 * (half - i);
        const __m512 t0 = _mm512_maskz_loadu_ps(tail_mask(table_floats), cos_sin + 2 * i);
        const __m512 t1 = _mm512_maskz_loadu_ps(tail_mask(table_floats - 16), cos_sin + 2 * i + 16);
        const __m512 c = _mm512_permutex2var_ps(t0, even, t1);
        const __m512 s = _mm512_permutex2var_ps(t0, odd, t1);
        const __m512 x0 = _mm512_maskz_loadu_ps(mask, head + i);
        const __m512 x1 = _mm512_maskz_loadu_ps(mask, head + i + half);
        _mm512_mask_storeu_ps(head + i, mask, _mm512_sub_ps(_mm512_mul_ps(x0, c), _mm512_mul_ps(x1, s)));
        _mm512_mask_storeu_ps(head + i + half, mask,
                              _mm512_add_ps(_mm512_mul_ps(x0, s), _mm512_mul_ps(x1, c)));
      }
    } else {
      // Pairs (x[2i], x[2i+1]) meet (cos, sin) at the same offsets: the
      // first becomes x0 c - x1 s, the second x1 c + x0 s.
      for (int32_t i = 0; i < rope_dims; i += 16) {
        const __mmask16 mask = tail_mask(rope_dims - i);
        const __m512 t = _mm512_maskz_loadu_ps(mask, cos_sin + i);
        const __m512 c = _mm512_permute_ps(t, 0xA0);  // cos into both slots of a pair
        const __m512 s = _mm512_permute_ps(t, 0xF5);  // sin into both slots
        const __m512 v = _mm512_maskz_loadu_ps(mask, head + i);
        const __m512 swapped = _mm512_permute_ps(v, 0xB1);
        // Flip the sign of the sin term of the first slot of each pair.
        const __m512 signed_s = _mm512_mask_xor_ps(s, 0x5555, s, _mm512_set1_ps(-0.0f));
        const __m512 rotated = _mm512_add_ps(_mm512_mul_ps(v, c), _mm512_mul_ps(swapped, signed_s));
        _mm512_mask_storeu_ps(head + i, mask, rotated);
      }
    }
  }
}

void swiglu(const float* gate, const float* up, int64_t n, float* out) {
  const __m512 one = _mm512_set1_ps(1.0f);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 mask = tail_mask(n - i);
    const __m512 g = _mm512_maskz_loadu_ps(mask, gate + i);
    const __m512 u = _mm512_maskz_loadu_ps(mask, up + i);
    const __m512 e = exp_avx512(_mm512_sub_ps(_mm512_setzero_ps(), g));
    const __m512 silu = _mm512_div_ps(g, _mm512_add_ps(one, e));
    _mm512_mask_storeu_ps(out + i, mask, _mm512_mul_ps(silu, u));
  }
}

// The clamps take the limit first, so a NaN input stays NaN (as the
// reference's std::min and std::clamp leave it).
void swiglu_oai(const float* gate, const float* up, int64_t n, float* out) {
  const __m512 one = _mm512_set1_ps(1.0f), limit = _mm512_set1_ps(7.0f), neg_limit = _mm512_set1_ps(-7.0f);
  const __m512 neg_alpha = _mm512_set1_ps(-1.702f);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 mask = tail_mask(n - i);
    const __m512 g = _mm512_min_ps(limit, _mm512_maskz_loadu_ps(mask, gate + i));
    const __m512 u = _mm512_max_ps(neg_limit, _mm512_min_ps(limit, _mm512_maskz_loadu_ps(mask, up + i)));
    const __m512 glu = _mm512_div_ps(g, _mm512_add_ps(one, exp_avx512(_mm512_mul_ps(neg_alpha, g))));
    _mm512_mask_storeu_ps(out + i, mask, _mm512_mul_ps(glu, _mm512_add_ps(u, one)));
  }
}

void add(const float* a, const float* b, int64_t n, float* out) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 mask = tail_mask(n - i);
    const __m512 sum = _mm512_add_ps(_mm512_maskz_loadu_ps(mask, a + i), _mm512_maskz_loadu_ps(mask, b + i));
    _mm512_mask_storeu_ps(out + i, mask, sum);
  }
}

void softmax(float* x, int64_t n) {
  if (n <= 0) return;
  __m512 max = _mm512_set1_ps(-__builtin_inff());
  for (int64_t i = 0; i < n; i += 16) {
    max = _mm512_mask_max_ps(max, tail_mask(n - i), _mm512_maskz_loadu_ps(tail_mask(n - i), x + i), max);
  }
  const __m512 shift = _mm512_set1_ps(_mm512_reduce_max_ps(max));
  __m512 sum = _mm512_setzero_ps();
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 mask = tail_mask(n - i);
    const __m512 e = exp_avx512(_mm512_sub_ps(_mm512_maskz_loadu_ps(mask, x + i), shift));
    _mm512_mask_storeu_ps(x + i, mask, e);
    sum = _mm512_mask_add_ps(sum, mask, sum, e);
  }
  const __m512 inverse = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(sum));
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 mask = tail_mask(n - i);
    _mm512_mask_storeu_ps(x + i, mask, _mm512_mul_ps(_mm512_maskz_loadu_ps(mask, x + i), inverse));
  }
}

int64_t argmax(const float* x, int64_t n) {
  // Per lane: the first largest non-NaN value and its index (-1: none yet).
  __m512 best = _mm512_set1_ps(-__builtin_inff());
  __m512i best_index = _mm512_set1_epi32(-1);
  __m512i index = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i step = _mm512_set1_epi32(16);
  for (int64_t i = 0; i < n; i += 16, index = _mm512_add_epi32(index, step)) {
    const __mmask16 mask = tail_mask(n - i);
    const __m512 v = _mm512_maskz_loadu_ps(mask, x + i);
    const __mmask16 none = _mm512_cmpeq_epi32_mask(best_index, _mm512_set1_epi32(-1));
    const __mmask16 better = _mm512_cmp_ps_mask(v, best, _CMP_GT_OQ) |
                             (none & _mm512_cmp_ps_mask(v, v, _CMP_ORD_Q));
    const __mmask16 take = static_cast<__mmask16>(better & mask);
    best = _mm512_mask_mov_ps(best, take, v);
    best_index = _mm512_mask_mov_epi32(best_index, take, index);
  }
  const __mmask16 valid = _mm512_cmpneq_epi32_mask(best_index, _mm512_set1_epi32(-1));
  if (valid == 0) return 0;
  const float top = _mm512_mask_reduce_max_ps(valid, best);
  const __mmask16 at_top = valid & _mm512_cmp_ps_mask(best, _mm512_set1_ps(top), _CMP_EQ_OQ);
  return _mm512_mask_reduce_min_epi32(at_top, best_index);
}

}  // namespace met::cpu::avx512
