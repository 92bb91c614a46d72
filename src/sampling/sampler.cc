// Sampler. Tested by tests/sampling/sampler_test.cc.
#include "sampling/sampler.h"

#include <algorithm>
#include <cmath>

namespace met {

Status validate_sampling(const SamplingParams& p) {
  if (!(p.temperature >= 0.0f) || !std::isfinite(p.temperature)) {
    return invalid_argument("temperature {} must be a finite number >= 0", p.temperature);
  }
  if (p.top_k < 0) return invalid_argument("top_k {} must be >= 0", p.top_k);
  if (!(p.top_p > 0.0f && p.top_p <= 1.0f)) return invalid_argument("top_p {} must be in (0, 1]", p.top_p);
  return ok_status();
}

Sampler::Sampler(const SamplingParams& params) : params_(params), rng_(params.seed) {}

TokenId Sampler::sample(std::span<const float> logits) {
  const size_t n = logits.size();
  if (is_greedy()) {
    size_t best = 0;
    for (size_t i = 1; i < n; ++i) {
      if (logits[i] > logits[best]) best = i;
    }
    return static_cast<TokenId>(best);
  }
  candidates_.resize(n);
  for (size_t i = 0; i < n; ++i) candidates_[i] = {logits[i] / params_.temperature, static_cast<TokenId>(i)};
  auto by_logit = [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); };
  size_t keep = n;
  if (params_.top_k > 0 && static_cast<size_t>(params_.top_k) < n) {
    keep = static_cast<size_t>(params_.top_k);
    std::partial_sort(candidates_.begin(), candidates_.begin() + keep, candidates_.end(), by_logit);
  } else {
    std::sort(candidates_.begin(), candidates_.end(), by_logit);
  }
  const float max_logit = candidates_[0].first;
  double total = 0.0;
  for (size_t i = 0; i < keep; ++i) {
    candidates_[i].first = std::exp(candidates_[i].first - max_logit);
    total += candidates_[i].first;
  }
  if (params_.top_p < 1.0f) {
    double cumulative = 0.0;
    size_t cut = keep;
    for (size_t i = 0; i < keep; ++i) {
      cumulative += candidates_[i].first / total;
      if (cumulative >= params_.top_p) {
        cut = i + 1;
        break;
      }
    }
    keep = cut;
    total = 0.0;
    for (size_t i = 0; i < keep; ++i) total += candidates_[i].first;
  }
  std::uniform_real_distribution<double> unit(0.0, total);
  double r = unit(rng_);
  for (size_t i = 0; i < keep; ++i) {
    r -= candidates_[i].first;
    if (r <= 0.0) return candidates_[i].second;
  }
  return candidates_[keep - 1].second;
}

}  // namespace met
