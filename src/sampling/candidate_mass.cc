// Candidate mass. Tested by tests/sampling/candidate_mass_test.cc.
#include "sampling/candidate_mass.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "core/check.h"
#include "sampling/avx2_exp.h"

namespace met {
namespace {

constexpr size_t kLanes = avx2::kLanes;
// Histogram resolution: the floor lands at most two buckets (2/kBuckets of
// the searched range, under 0.3 nats) below the crossing.
constexpr int kBuckets = 256;

// The weights of items[i, i + 8), given -max in every lane.
inline __m256 weights_at(const Candidate* items, __m256 neg_max) {
  return avx2::exp_nonpositive(_mm256_add_ps(avx2::load_logits(items), neg_max));
}

// Mass by distance below the max: bucket b holds the weights of the
// candidates with (max - logit) * buckets_per_nat in [b, b + 1), over
// [0, range); the rest are dropped. Each lane has its own histogram (and a
// drop slot) so that the scalar adds of one vector never wait on each other.
class MassHistogram {
 public:
  void fill(std::span<const Candidate> items, float max_logit, float range, float buckets_per_nat) {
    const __m256 vmax = _mm256_set1_ps(max_logit);
    const __m256 vrange = _mm256_set1_ps(range);
    const __m256 vscale = _mm256_set1_ps(buckets_per_nat);
    const __m256i dropped = _mm256_set1_epi32(kBuckets);
    const __m256i lane_base = _mm256_setr_epi32(0, kStride, 2 * kStride, 3 * kStride, 4 * kStride, 5 * kStride,
                                                6 * kStride, 7 * kStride);
    size_t i = 0;
    for (; i + kLanes <= items.size(); i += kLanes) {
      const __m256 d = _mm256_sub_ps(vmax, avx2::load_logits(items.data() + i));
      const __m256 in_range = _mm256_cmp_ps(d, vrange, _CMP_LT_OQ);
      if (_mm256_movemask_ps(in_range) == 0) continue;
      const __m256i b = _mm256_min_epi32(_mm256_cvttps_epi32(_mm256_mul_ps(d, vscale)), dropped);
      alignas(32) float w[kLanes];
      alignas(32) int32_t slot[kLanes];
      _mm256_store_ps(w, avx2::exp_nonpositive(_mm256_sub_ps(_mm256_setzero_ps(), d)));
      _mm256_store_si256(reinterpret_cast<__m256i*>(slot),
                         _mm256_add_epi32(lane_base, _mm256_blendv_epi8(dropped, b, _mm256_castps_si256(in_range))));
      for (size_t lane = 0; lane < kLanes; ++lane) counts_[static_cast<size_t>(slot[lane])] += w[lane];
    }
    for (; i < items.size(); ++i) {
      const float d = max_logit - items[i].logit;
      if (!(d < range)) continue;
      const auto b = static_cast<size_t>(std::min(static_cast<int>(d * buckets_per_nat), kBuckets - 1));
      counts_[b] += static_cast<float>(std::exp(static_cast<double>(-d)));
    }
  }

  double bucket(int b) const {
    double total = 0.0;
    for (size_t lane = 0; lane < kLanes; ++lane) total += counts_[lane * kStride + static_cast<size_t>(b)];
    return total;
  }

 private:
  static constexpr int kStride = kBuckets + 1;  // the buckets and the drop slot
  std::array<float, kLanes * kStride> counts_{};
};

}  // namespace

float max_logit_of(std::span<const Candidate> items) {
  MET_DCHECK(!items.empty());
  __m256 m = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  size_t i = 0;
  for (; i + kLanes <= items.size(); i += kLanes) m = _mm256_max_ps(avx2::load_logits(items.data() + i), m);
  // Operand order and the scalar compares skip NaN as std::max did.
  alignas(32) float lanes[kLanes];
  _mm256_store_ps(lanes, m);
  float best = items[0].logit;
  for (float x : lanes) best = x > best ? x : best;
  for (; i < items.size(); ++i) best = items[i].logit > best ? items[i].logit : best;
  return best;
}

double exp_mass(std::span<const Candidate> items, float max_logit) {
  const __m256 neg_max = _mm256_set1_ps(-max_logit);
  double total = 0.0;
  size_t i = 0;
  // Float lanes over 64 candidates at a time, then into the double total.
  constexpr size_t kBlock = 8 * kLanes;
  for (; i + kBlock <= items.size(); i += kBlock) {
    __m256 s = weights_at(items.data() + i, neg_max);
    for (size_t j = kLanes; j < kBlock; j += kLanes) s = _mm256_add_ps(s, weights_at(items.data() + i + j, neg_max));
    total += avx2::sum_lanes(s);
  }
  for (; i + kLanes <= items.size(); i += kLanes) total += avx2::sum_lanes(weights_at(items.data() + i, neg_max));
  for (; i < items.size(); ++i) total += std::exp(static_cast<double>(items[i].logit - max_logit));
  return total;
}

std::optional<float> floor_of_mass(std::span<const Candidate> items, float max_logit, double total,
                                   double target) {
  // The mass below max - range is at most n * exp(-range); a range where that
  // is under the slack (total - target) leaves the crossing above it, and one
  // more nat covers the weights' rounding.
  const double slack = total - target;
  const auto n = static_cast<double>(items.size());
  if (!(slack > 0.0)) return std::nullopt;
  const double range_nats = std::log(n / slack) + 1.0;
  if (!(range_nats > 0.0) || range_nats > 80.0) return std::nullopt;  // exp underflows past 87
  const auto range = static_cast<float>(range_nats);
  const float buckets_per_nat = static_cast<float>(kBuckets) / range;
  MassHistogram hist;
  hist.fill(items, max_logit, range, buckets_per_nat);
  double cumulative = 0.0;
  for (int b = 0; b < kBuckets; ++b) {
    cumulative += hist.bucket(b);
    if (cumulative >= target) return max_logit - static_cast<float>(b + 2) / buckets_per_nat;
  }
  return std::nullopt;
}

TokenId pick_by_mass(std::span<const Candidate> items, float max_logit, double r) {
  const __m256 neg_max = _mm256_set1_ps(-max_logit);
  TokenId last_possible = items[0].id;
  size_t i = 0;
  // Whole blocks whose mass stays under r are skipped; the block that reaches
  // it is walked one candidate at a time.
  for (; i + kLanes <= items.size(); i += kLanes) {
    const __m256 w = weights_at(items.data() + i, neg_max);
    const double block = avx2::sum_lanes(w);
    const auto positive =
        static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(w, _mm256_setzero_ps(), _CMP_GT_OQ)));
    if (positive == 0) continue;
    if (r - block > 0.0) {
      r -= block;
      last_possible = items[i + static_cast<size_t>(31 - __builtin_clz(positive))].id;
      continue;
    }
    alignas(32) float lanes[kLanes];
    _mm256_store_ps(lanes, w);
    for (size_t j = 0; j < kLanes; ++j) {
      if (lanes[j] <= 0.0f) continue;
      last_possible = items[i + j].id;
      r -= lanes[j];
      if (r <= 0.0) return last_possible;
    }
  }
  for (; i < items.size(); ++i) {
    const double weight = std::exp(static_cast<double>(items[i].logit - max_logit));
    if (weight <= 0.0) continue;
    last_possible = items[i].id;
    r -= weight;
    if (r <= 0.0) return last_possible;
  }
  return last_possible;  // rounding
}

}  // namespace met
