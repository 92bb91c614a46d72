// Token penalties. Tested by tests/sampling/penalties_test.cc.
#include "sampling/penalties.h"

namespace met {

void apply_repetition_penalty(float penalty, std::span<const TokenId> window, TokenTally& scratch,
                              std::span<float> logits) {
  scratch.reset(logits.size());
  for (TokenId t : window) scratch.raise(t, 1);
  for (TokenId t : scratch.touched()) {
    float& logit = logits[static_cast<size_t>(t)];
    logit = logit > 0.0f ? logit / penalty : logit * penalty;
  }
}

void apply_presence_frequency(float presence, float frequency, std::span<const TokenId> output,
                              TokenTally& scratch, std::span<float> logits) {
  scratch.reset(logits.size());
  for (TokenId t : output) scratch.add(t);
  for (TokenId t : scratch.touched()) {
    logits[static_cast<size_t>(t)] -= presence + frequency * static_cast<float>(scratch.value(t));
  }
}

}  // namespace met
