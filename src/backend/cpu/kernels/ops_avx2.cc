// AVX2 + FMA row kernels for ops.h, 8 floats per vector; tails go through
// vmaskmovps. add and rope_rotate are bit for bit the reference (same
// operations, no contraction: met_backend builds with -ffp-contract=off).
// rms_norm, rms_norm_gated, l2_norm and softmax sum in float lanes;
// swiglu, swiglu_oai, rms_norm_gated's silu and softmax use core/vector_exp.h's
// exp_avx2 (within 2e-7 relative of std::exp; results below 2^-126
// become 0). ops_test.cc states the tolerances.
// Built with -march=x86-64-v3: includes only intrinsics and declarations.
// Threading: pure functions. Tested by tests/backend/ops_test.cc.
#include <immintrin.h>

#include "backend/cpu/kernels/ops_kernels.h"
#include "core/vector_exp.h"

namespace met::cpu::avx2 {
namespace {

// Lanes [0, remaining) set, for vmaskmovps.
__m256i tail_mask(int64_t remaining) {
  const int32_t r = remaining >= 8 ? 8 : static_cast<int32_t>(remaining < 0 ? 0 : remaining);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(r), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

__m256 load_tail(const float* p, int64_t remaining) {
  return _mm256_maskload_ps(p, tail_mask(remaining));
}
void store_tail(float* p, int64_t remaining, __m256 v) {
  _mm256_maskstore_ps(p, tail_mask(remaining), v);
}

float hsum(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_movehdup_ps(t)));
}

float hmax(__m256 v) {
  const __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_max_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_max_ss(t, _mm_movehdup_ps(t)));
}

void rotate_neox(float* head, int32_t half, const float* cos_sin) {
  const __m256i even = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
  for (int32_t i = 0; i < half; i += 8) {
    const int64_t remaining = half - i;
    const __m256 t0 = load_tail(cos_sin + 2 * i, 2 * remaining);
    const __m256 t1 = load_tail(cos_sin + 2 * i + 8, 2 * remaining - 8);
    // t0 = c0 s0 .. c3 s3, t1 = c4 s4 .. c7 s7: gather cos and sin in order.
    const __m256 lo = _mm256_permutevar8x32_ps(t0, even);
    const __m256 hi = _mm256_permutevar8x32_ps(t1, even);
    const __m256 c = _mm256_blend_ps(lo, hi, 0xF0);
    const __m256i odd_idx = _mm256_add_epi32(even, _mm256_set1_epi32(1));
    const __m256 s = _mm256_blend_ps(_mm256_permutevar8x32_ps(t0, odd_idx),
                                     _mm256_permutevar8x32_ps(t1, odd_idx), 0xF0);
    const __m256 x0 = load_tail(head + i, remaining);
    const __m256 x1 = load_tail(head + i + half, remaining);
    store_tail(head + i, remaining, _mm256_sub_ps(_mm256_mul_ps(x0, c), _mm256_mul_ps(x1, s)));
    store_tail(head + i + half, remaining, _mm256_add_ps(_mm256_mul_ps(x0, s), _mm256_mul_ps(x1, c)));
  }
}

void rotate_pairs(float* head, int32_t rope_dims, const float* cos_sin) {
  // Pairs (x[2i], x[2i+1]) meet (cos, sin) at the same offsets: the first
  // becomes x0 c - x1 s, the second x1 c + x0 s.
  const __m256 flip = _mm256_setr_ps(-0.0f, 0.0f, -0.0f, 0.0f, -0.0f, 0.0f, -0.0f, 0.0f);
  for (int32_t i = 0; i < rope_dims; i += 8) {
    const int64_t remaining = rope_dims - i;
    const __m256 t = load_tail(cos_sin + i, remaining);
    const __m256 c = _mm256_permute_ps(t, 0xA0);
    const __m256 s = _mm256_xor_ps(_mm256_permute_ps(t, 0xF5), flip);
    const __m256 v = load_tail(head + i, remaining);
    const __m256 swapped = _mm256_permute_ps(v, 0xB1);
    store_tail(head + i, remaining, _mm256_add_ps(_mm256_mul_ps(v, c), _mm256_mul_ps(swapped, s)));
  }
}

}  // namespace

void rms_norm(const float* x, const float* weight, int64_t n, float eps, float* out) {
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < n; i += 8) {
    const __m256 v = load_tail(x + i, n - i);
    acc = _mm256_fmadd_ps(v, v, acc);
  }
  const float mean = hsum(acc) / static_cast<float>(n);
  const __m256 scale = _mm256_set1_ps(1.0f / _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(mean + eps))));
  for (int64_t i = 0; i < n; i += 8) {
    const __m256 v = _mm256_mul_ps(load_tail(x + i, n - i), scale);
    store_tail(out + i, n - i, _mm256_mul_ps(v, load_tail(weight + i, n - i)));
  }
}

void rms_norm_gated(const float* x, const float* weight, const float* z, int64_t n, float eps, float* out) {
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < n; i += 8) {
    const __m256 v = load_tail(x + i, n - i);
    acc = _mm256_fmadd_ps(v, v, acc);
  }
  const float mean = hsum(acc) / static_cast<float>(n);
  const __m256 scale = _mm256_set1_ps(1.0f / _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(mean + eps))));
  const __m256 one = _mm256_set1_ps(1.0f);
  for (int64_t i = 0; i < n; i += 8) {
    const __m256 g = load_tail(z + i, n - i);
    const __m256 gate = _mm256_div_ps(g, _mm256_add_ps(one, exp_avx2(_mm256_sub_ps(_mm256_setzero_ps(), g))));
    const __m256 v = _mm256_mul_ps(_mm256_mul_ps(load_tail(x + i, n - i), scale), load_tail(weight + i, n - i));
    store_tail(out + i, n - i, _mm256_mul_ps(v, gate));
  }
}

void l2_norm(float* x, int64_t n, float eps) {
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < n; i += 8) {
    const __m256 v = load_tail(x + i, n - i);
    acc = _mm256_fmadd_ps(v, v, acc);
  }
  const float norm = _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(hsum(acc))));
  const __m256 scale = _mm256_set1_ps(1.0f / (norm > eps ? norm : eps));
  for (int64_t i = 0; i < n; i += 8) store_tail(x + i, n - i, _mm256_mul_ps(load_tail(x + i, n - i), scale));
}

void rope_rotate(float* x, int32_t num_heads, int32_t head_dim, int32_t rope_dims, bool neox,
                 const float* cos_sin) {
  for (int32_t h = 0; h < num_heads; ++h) {
    float* head = x + static_cast<int64_t>(h) * head_dim;
    if (neox) {
      rotate_neox(head, rope_dims / 2, cos_sin);
    } else {
      rotate_pairs(head, rope_dims, cos_sin);
    }
  }
}

void swiglu(const float* gate, const float* up, int64_t n, float* out) {
  const __m256 one = _mm256_set1_ps(1.0f);
  for (int64_t i = 0; i < n; i += 8) {
    const __m256 g = load_tail(gate + i, n - i);
    const __m256 e = exp_avx2(_mm256_sub_ps(_mm256_setzero_ps(), g));
    const __m256 silu = _mm256_div_ps(g, _mm256_add_ps(one, e));
    store_tail(out + i, n - i, _mm256_mul_ps(silu, load_tail(up + i, n - i)));
  }
}

// The clamps take the limit first, so a NaN input stays NaN (as the
// reference's std::min and std::clamp leave it).
void swiglu_oai(const float* gate, const float* up, int64_t n, float* out) {
  const __m256 one = _mm256_set1_ps(1.0f), limit = _mm256_set1_ps(7.0f), neg_limit = _mm256_set1_ps(-7.0f);
  const __m256 neg_alpha = _mm256_set1_ps(-1.702f);
  for (int64_t i = 0; i < n; i += 8) {
    const __m256 g = _mm256_min_ps(limit, load_tail(gate + i, n - i));
    const __m256 u = _mm256_max_ps(neg_limit, _mm256_min_ps(limit, load_tail(up + i, n - i)));
    const __m256 glu = _mm256_div_ps(g, _mm256_add_ps(one, exp_avx2(_mm256_mul_ps(neg_alpha, g))));
    store_tail(out + i, n - i, _mm256_mul_ps(glu, _mm256_add_ps(u, one)));
  }
}

void add(const float* a, const float* b, int64_t n, float* out) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(out + i, _mm256_add_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
  }
  if (i < n) store_tail(out + i, n - i, _mm256_add_ps(load_tail(a + i, n - i), load_tail(b + i, n - i)));
}

void softmax(float* x, int64_t n) {
  if (n <= 0) return;
  __m256 max = _mm256_set1_ps(-__builtin_inff());
  for (int64_t i = 0; i < n; i += 8) {
    // Masked-off lanes load 0; blend them back to -inf so they never win.
    const __m256 mask = _mm256_castsi256_ps(tail_mask(n - i));
    const __m256 v = _mm256_blendv_ps(max, load_tail(x + i, n - i), mask);
    max = _mm256_max_ps(v, max);
  }
  const __m256 shift = _mm256_set1_ps(hmax(max));
  __m256 sum = _mm256_setzero_ps();
  for (int64_t i = 0; i < n; i += 8) {
    const __m256 mask = _mm256_castsi256_ps(tail_mask(n - i));
    const __m256 e = _mm256_and_ps(exp_avx2(_mm256_sub_ps(load_tail(x + i, n - i), shift)), mask);
    store_tail(x + i, n - i, e);
    sum = _mm256_add_ps(sum, e);
  }
  const __m256 inverse = _mm256_set1_ps(1.0f / hsum(sum));
  for (int64_t i = 0; i < n; i += 8) {
    store_tail(x + i, n - i, _mm256_mul_ps(load_tail(x + i, n - i), inverse));
  }
}

int64_t argmax(const float* x, int64_t n) {
  // Per lane: the first largest non-NaN value and its index (-1: none yet).
  __m256 best = _mm256_set1_ps(-__builtin_inff());
  __m256i best_index = _mm256_set1_epi32(-1);
  __m256i index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int64_t i = 0; i < n; i += 8, index = _mm256_add_epi32(index, _mm256_set1_epi32(8))) {
    const __m256 in_range = _mm256_castsi256_ps(tail_mask(n - i));
    const __m256 v = load_tail(x + i, n - i);
    const __m256 none = _mm256_castsi256_ps(_mm256_cmpeq_epi32(best_index, _mm256_set1_epi32(-1)));
    const __m256 better = _mm256_or_ps(_mm256_cmp_ps(v, best, _CMP_GT_OQ),
                                       _mm256_and_ps(none, _mm256_cmp_ps(v, v, _CMP_ORD_Q)));
    const __m256 take = _mm256_and_ps(better, in_range);
    best = _mm256_blendv_ps(best, v, take);
    best_index = _mm256_castps_si256(
        _mm256_blendv_ps(_mm256_castsi256_ps(best_index), _mm256_castsi256_ps(index), take));
  }
  alignas(32) float values[8];
  alignas(32) int32_t indices[8];
  _mm256_store_ps(values, best);
  _mm256_store_si256(reinterpret_cast<__m256i*>(indices), best_index);
  int64_t winner = -1;
  for (int lane = 0; lane < 8; ++lane) {
    if (indices[lane] < 0) continue;
    if (winner < 0 || values[lane] > values[winner] ||
        (values[lane] == values[winner] && indices[lane] < indices[winner])) {
      winner = lane;
    }
  }
  return winner < 0 ? 0 : indices[winner];
}

}  // namespace met::cpu::avx2
