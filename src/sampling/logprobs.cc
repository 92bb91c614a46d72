// Logprobs over a raw logits row. Tested by tests/sampling/logprobs_test.cc.
//
// The passes over the row use AVX2 (met's baseline ISA); the test checks them
// against a double-precision scalar log-softmax.
#include "sampling/logprobs.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <immintrin.h>
#include <limits>

#include "core/check.h"
#include "sampling/avx2_exp.h"

namespace met {
namespace {

constexpr size_t kAvx2Lanes = 8;  // one AVX2 register (met's baseline is x86-64-v3)
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

using avx2::exp_nonpositive;  // within 2e-7 relative; 0 below -87

float horizontal_max(__m256 v) {
  alignas(32) float lanes[kAvx2Lanes];
  _mm256_store_ps(lanes, v);
  float best = kNegInf;
  for (float x : lanes) best = x > best ? x : best;
  return best;
}

float row_max(std::span<const float> x) {
  __m256 m = _mm256_set1_ps(kNegInf);
  size_t i = 0;
  for (; i + kAvx2Lanes <= x.size(); i += kAvx2Lanes) m = _mm256_max_ps(m, _mm256_loadu_ps(x.data() + i));
  float best = horizontal_max(m);
  for (; i < x.size(); ++i) best = x[i] > best ? x[i] : best;
  return best;
}

float exp_sum(std::span<const float> x, float max) {
  const __m256 vmax = _mm256_set1_ps(max);
  __m256 s = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + kAvx2Lanes <= x.size(); i += kAvx2Lanes) {
    s = _mm256_add_ps(s, exp_nonpositive(_mm256_sub_ps(_mm256_loadu_ps(x.data() + i), vmax)));
  }
  alignas(32) float lanes[kAvx2Lanes];
  _mm256_store_ps(lanes, s);
  double total = 0.0;
  for (float v : lanes) total += v;
  for (; i < x.size(); ++i) {
    total += std::exp(static_cast<double>(x[i]) - static_cast<double>(max));
  }
  return static_cast<float>(total);
}

int32_t count_greater(std::span<const float> x, float value) {
  const __m256 v = _mm256_set1_ps(value);
  __m256i c = _mm256_setzero_si256();
  size_t i = 0;
  for (; i + kAvx2Lanes <= x.size(); i += kAvx2Lanes) {
    // A true compare is all ones (-1): subtracting it counts.
    c = _mm256_sub_epi32(c, _mm256_castps_si256(_mm256_cmp_ps(_mm256_loadu_ps(x.data() + i), v, _CMP_GT_OQ)));
  }
  alignas(32) int32_t lanes[kAvx2Lanes];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), c);
  int32_t total = 0;
  for (int32_t n : lanes) total += n;
  for (; i < x.size(); ++i) total += x[i] > value ? 1 : 0;
  return total;
}

// Larger logit first; equal logits: smaller id first.
bool before(const TopLogprob& a, const TopLogprob& b) {
  return a.logprob != b.logprob ? a.logprob > b.logprob : a.token < b.token;
}

// The `num_top` largest logits (as raw logits in .logprob), sorted by
// before(). A chunk whose max cannot enter a full heap is skipped whole.
std::vector<TopLogprob> top_logits(std::span<const float> x, size_t num_top) {
  std::vector<TopLogprob> heap;  // a heap under before(): front is the worst kept
  heap.reserve(num_top + 1);
  auto offer = [&](size_t id) {
    const TopLogprob cand{static_cast<TokenId>(id), x[id]};
    if (!(x[id] > kNegInf)) return;
    if (heap.size() == num_top) {
      if (!before(cand, heap.front())) return;
      std::pop_heap(heap.begin(), heap.end(), before);
      heap.pop_back();
    }
    heap.push_back(cand);
    std::push_heap(heap.begin(), heap.end(), before);
  };
  size_t i = 0;
  __m256 threshold = _mm256_set1_ps(kNegInf);
  for (; i + kAvx2Lanes <= x.size(); i += kAvx2Lanes) {
    if (heap.size() == num_top) {
      const __m256 above = _mm256_cmp_ps(_mm256_loadu_ps(x.data() + i), threshold, _CMP_GE_OQ);
      if (_mm256_movemask_ps(above) == 0) continue;
    }
    for (size_t k = 0; k < kAvx2Lanes; ++k) offer(i + k);
    if (heap.size() == num_top) threshold = _mm256_set1_ps(heap.front().logprob);
  }
  for (; i < x.size(); ++i) offer(i);
  std::sort_heap(heap.begin(), heap.end(), before);
  return heap;
}

}  // namespace

float log_sum_exp(std::span<const float> logits) {
  const float max = row_max(logits);
  if (!(max > kNegInf)) return kNegInf;
  return max + std::log(exp_sum(logits, max));
}

TokenLogprob token_logprob(std::span<const float> logits, TokenId chosen, int32_t num_top) {
  MET_CHECK(chosen >= 0 && static_cast<size_t>(chosen) < logits.size(), "chosen token {} outside the row of {}",
            chosen, logits.size());
  MET_CHECK(num_top >= 0 && num_top <= kMaxTopLogprobs, "num_top {} outside [0, {}]", num_top, kMaxTopLogprobs);
  const float lse = log_sum_exp(logits);
  const float chosen_logit = logits[static_cast<size_t>(chosen)];
  TokenLogprob out;
  out.token = chosen;
  out.logprob = chosen_logit - lse;
  out.rank = 1 + count_greater(logits, chosen_logit);
  if (num_top > 0) {
    out.top = top_logits(logits, static_cast<size_t>(num_top));
    for (TopLogprob& t : out.top) t.logprob -= lse;
  }
  return out;
}

}  // namespace met
