// Truncation samplers. Tested by tests/sampling/truncation_test.cc.
#include "sampling/truncation.h"

#include <algorithm>
#include <cmath>

#include "sampling/candidate_mass.h"

namespace met {
namespace {

// Up to this many candidates the steps run their exact scalar form (double
// std::exp, a sorted walk); above it the vectorized passes of
// candidate_mass.h, whose weights differ from std::exp's by under 1e-5 relative.
constexpr size_t kScalarMax = 256;

bool vectorized(const Candidates& c, float max_logit) { return c.size() > kScalarMax && std::isfinite(max_logit); }

// Sum of exp(logit - max) over the candidates.
double mass(const Candidates& c, float max_logit) {
  if (vectorized(c, max_logit)) return exp_mass(c.items(), max_logit);
  double total = 0.0;
  for (const Candidate& x : c.items()) total += std::exp(static_cast<double>(x.logit - max_logit));
  return total;
}

double uniform01(std::mt19937_64& rng) { return std::uniform_real_distribution<double>(0.0, 1.0)(rng); }

}  // namespace

void apply_top_p(Candidates& c, float top_p) {
  if (top_p >= 1.0f || c.size() <= 1) return;
  const float max_logit = c.max_logit();
  const double total = mass(c, max_logit);
  const double target = static_cast<double>(top_p) * total;
  // Sort only the candidates above a floor that holds the target mass; the
  // walk below re-checks it and grows the sorted prefix if rounding fell short.
  if (vectorized(c, max_logit) && c.num_sorted() < c.size()) {
    const auto floor = floor_of_mass(c.items(), max_logit, total, target);
    if (floor.has_value()) c.sort_prefix_at_least(*floor);
  }
  double cumulative = 0.0;
  size_t i = 0;
  for (size_t chunk = 64;; chunk *= 2) {
    c.sort_prefix(chunk);
    const auto items = c.items();
    for (; i < c.num_sorted(); ++i) {
      cumulative += std::exp(static_cast<double>(items[i].logit - max_logit));
      if (cumulative >= target) {
        c.truncate(i + 1);
        return;
      }
    }
    if (c.num_sorted() == c.size()) return;  // rounding: keep everything
  }
}

void apply_min_p(Candidates& c, float min_p) {
  if (min_p <= 0.0f || c.size() <= 1) return;
  const float threshold = c.max_logit() + std::log(min_p);
  c.keep_if([threshold](const Candidate& x, size_t) { return x.logit >= threshold; });
}

void apply_typical_p(Candidates& c, float typical_p, std::vector<std::pair<float, uint32_t>>& scratch) {
  if (typical_p >= 1.0f || c.size() <= 1) return;
  const float max_logit = c.max_logit();
  const double total = mass(c, max_logit);
  const double log_total = std::log(total);
  const auto items = c.items();
  double entropy = 0.0;
  for (const Candidate& x : items) {
    const double log_p = static_cast<double>(x.logit - max_logit) - log_total;
    if (std::isfinite(log_p)) entropy -= std::exp(log_p) * log_p;  // 0 log 0 = 0, not NaN
  }
  scratch.clear();
  for (size_t i = 0; i < items.size(); ++i) {
    const double log_p = static_cast<double>(items[i].logit - max_logit) - log_total;
    scratch.emplace_back(static_cast<float>(std::abs(-log_p - entropy)), static_cast<uint32_t>(i));
  }
  // The most typical tokens first, sorted only as far as the mass needs:
  // each round selects the next batch (nth_element) and sorts just it, so
  // the work follows the tokens kept, not the vocabulary.
  double cumulative = 0.0;
  size_t keep = scratch.size();
  size_t sorted = 0;
  size_t batch = std::min<size_t>(scratch.size(), 64);
  bool reached = false;
  while (!reached && sorted < scratch.size()) {
    const auto first = scratch.begin() + static_cast<std::ptrdiff_t>(sorted);
    const auto last = scratch.begin() + static_cast<std::ptrdiff_t>(batch);
    if (batch < scratch.size()) std::nth_element(first, last, scratch.end());
    std::sort(first, last);
    for (size_t j = sorted; j < batch; ++j) {
      cumulative += std::exp(static_cast<double>(items[scratch[j].second].logit - max_logit) - log_total);
      if (cumulative >= typical_p) {
        keep = j + 1;
        reached = true;
        break;
      }
    }
    sorted = batch;
    batch = std::min(scratch.size(), batch * 2);
  }
  // Mark the kept indices by reusing the score slot: index order, then keep.
  std::sort(scratch.begin(), scratch.begin() + static_cast<std::ptrdiff_t>(keep),
            [](const auto& a, const auto& b) { return a.second < b.second; });
  size_t next = 0;
  c.keep_if([&](const Candidate&, size_t i) {
    if (next < keep && scratch[next].second == i) {
      ++next;
      return true;
    }
    return false;
  });
}

void apply_top_n_sigma(Candidates& c, float n) {
  if (n <= 0.0f || c.size() <= 1) return;
  double sum = 0.0;
  double sum_sq = 0.0;
  size_t count = 0;
  float max_logit = -INFINITY;
  for (const Candidate& x : c.items()) {
    if (!std::isfinite(x.logit)) continue;
    sum += x.logit;
    sum_sq += static_cast<double>(x.logit) * x.logit;
    max_logit = std::max(max_logit, x.logit);
    ++count;
  }
  if (count == 0) return;
  const double mean = sum / static_cast<double>(count);
  const double sigma = std::sqrt(std::max(0.0, sum_sq / static_cast<double>(count) - mean * mean));
  const auto threshold = static_cast<float>(max_logit - n * sigma);
  c.keep_if([threshold](const Candidate& x, size_t) { return x.logit >= threshold; });
}

void apply_xtc(Candidates& c, float probability, float threshold, std::mt19937_64& rng) {
  if (uniform01(rng) >= probability || c.size() <= 1) return;
  const float max_logit = c.max_logit();
  const double total = mass(c, max_logit);
  // At most 1/threshold tokens can reach the threshold.
  c.sort_prefix(static_cast<size_t>(1.0f / threshold) + 1);
  const auto items = c.items();
  size_t above = 0;
  while (above < c.num_sorted() &&
         std::exp(static_cast<double>(items[above].logit - max_logit)) / total >= threshold) {
    ++above;
  }
  if (above < 2) return;
  c.keep_if([above](const Candidate&, size_t i) { return i + 1 >= above; });
}

TokenId draw(const Candidates& c, std::mt19937_64& rng) {
  const auto items = c.items();
  const float max_logit = c.max_logit();
  if (!std::isfinite(max_logit)) return items[0].id;  // every token banned
  double r = uniform01(rng) * mass(c, max_logit);
  if (vectorized(c, max_logit)) return pick_by_mass(items, max_logit, r);
  TokenId last_possible = items[0].id;
  for (const Candidate& x : items) {
    const double weight = std::exp(static_cast<double>(x.logit - max_logit));
    if (weight <= 0.0) continue;
    last_possible = x.id;
    r -= weight;
    if (r <= 0.0) return x.id;
  }
  return last_possible;  // rounding
}

}  // namespace met
