// AdaptiveTemperature: an opt-in controller (adaptive_temperature: true) that
// cools the request's temperature T while the model is confident and warms
// it back when the model becomes unsure. Before each draw it looks at the
// model's own distribution p = softmax(logits) after the logit processors
// (at temperature 1), its top probability p1 and its entropy H (nats):
//   - entropy spike: H > H_avg + adaptive_entropy_spike, where H_avg is an
//     exponential moving average of H (weight kEntropyAverageWeight, seeded
//     by the first H): the temperature jumps back to T;
//   - confident: p1 >= adaptive_confidence: the temperature is multiplied by
//     adaptive_decay, down to the floor T * adaptive_min_ratio, so a run of
//     confident tokens cools geometrically;
//   - otherwise: the temperature relaxes back towards T, divided by
//     adaptive_decay per token, up to T.
// The temperature returned is the one used for this token; H_avg is updated
// after. Invariant: the result is in [T * adaptive_min_ratio, T].
// Threading: one per sequence. Tested by tests/sampling/adaptive_temperature_test.cc.
#pragma once

#include <optional>
#include <span>

#include "sampling/sampling_params.h"

namespace met {

class AdaptiveTemperature {
 public:
  static constexpr double kEntropyAverageWeight = 0.25;

  explicit AdaptiveTemperature(const SamplingParams& params);

  // The temperature for the token drawn from `logits`; updates the state.
  float next(std::span<const float> logits);
  float current() const { return current_; }

 private:
  float base_;
  float confidence_;
  float decay_;
  float floor_;
  float spike_;
  float current_;
  std::optional<double> average_entropy_;
};

}  // namespace met
