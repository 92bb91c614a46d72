// Eight-lane AVX2 helpers for the passes over Candidates (met's baseline ISA
// is x86-64-v3): loading eight candidates' logits and exp(x) for x <= 0.
// Invariants: exp_nonpositive is core/vector_exp.h's exp_avx2 (within 2e-7
// relative of exp(x) for -87 <= x <= 0), and exactly 0 below -87 (so a
// banned, -inf logit weighs nothing). logprobs.cc uses it too.
// Threading: pure functions. Tested (against std::exp) by
// tests/sampling/candidate_mass_test.cc.
#pragma once

#include <cstddef>
#include <immintrin.h>

#include "core/vector_exp.h"
#include "sampling/candidates.h"

namespace met::avx2 {

constexpr int kLanes = 8;

// Logits of items[0, 8) in order. Candidate is {float logit, int32 id}.
inline __m256 load_logits(const Candidate* items) {
  static_assert(sizeof(Candidate) == 8 && offsetof(Candidate, logit) == 0);
  const auto* f = reinterpret_cast<const float*>(items);
  const __m256 a = _mm256_loadu_ps(f);      // l0 i0 l1 i1 | l2 i2 l3 i3
  const __m256 b = _mm256_loadu_ps(f + 8);  // l4 i4 l5 i5 | l6 i6 l7 i7
  const __m256 mixed = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));  // l0 l1 l4 l5 | l2 l3 l6 l7
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(mixed), _MM_SHUFFLE(3, 1, 2, 0)));
}

// core/vector_exp.h's exp_avx2, cut to exactly 0 below -87.
inline __m256 exp_nonpositive(__m256 x) {
  return _mm256_and_ps(exp_avx2(x), _mm256_cmp_ps(x, _mm256_set1_ps(-87.0f), _CMP_GE_OQ));
}

// Sum of the eight lanes, in double.
inline double sum_lanes(__m256 v) {
  const __m256d lo = _mm256_cvtps_pd(_mm256_castps256_ps128(v));
  const __m256d hi = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
  alignas(32) double d[4];
  _mm256_store_pd(d, _mm256_add_pd(lo, hi));
  return (d[0] + d[1]) + (d[2] + d[3]);
}

}  // namespace met::avx2
