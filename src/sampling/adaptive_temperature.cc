// AdaptiveTemperature. Tested by tests/sampling/adaptive_temperature_test.cc.
#include "sampling/adaptive_temperature.h"

#include <algorithm>
#include <cmath>

namespace met {

AdaptiveTemperature::AdaptiveTemperature(const SamplingParams& params)
    : base_(params.temperature),
      confidence_(params.adaptive_confidence),
      decay_(params.adaptive_decay),
      floor_(params.temperature * params.adaptive_min_ratio),
      spike_(params.adaptive_entropy_spike),
      current_(params.temperature) {}

float AdaptiveTemperature::next(std::span<const float> logits) {
  float max_logit = -INFINITY;
  for (float l : logits) max_logit = std::max(max_logit, l);
  if (!std::isfinite(max_logit)) return current_;
  double total = 0.0;
  double weighted = 0.0;  // sum of w * (l - max)
  for (float l : logits) {
    const double d = static_cast<double>(l - max_logit);
    const double w = std::exp(d);
    total += w;
    if (w > 0.0) weighted += w * d;
  }
  // H = log Z - E[l - max], with Z = total; p1 = 1 / total.
  const double entropy = std::log(total) - weighted / total;
  const double top = 1.0 / total;
  if (average_entropy_.has_value() && entropy > *average_entropy_ + spike_) {
    current_ = base_;
  } else if (top >= confidence_) {
    current_ = std::max(floor_, current_ * decay_);
  } else {
    current_ = std::min(base_, current_ / decay_);
  }
  average_entropy_ = average_entropy_.has_value()
                         ? (1.0 - kEntropyAverageWeight) * *average_entropy_ + kEntropyAverageWeight * entropy
                         : entropy;
  return current_;
}

}  // namespace met
