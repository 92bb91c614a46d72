// Token penalties, the chain's second step.
//  - Repetition penalty (Keskar et al., as llama.cpp and vLLM): every distinct
//    token of `window` (the last repetition_penalty_window tokens of
//    prompt+output) has its logit divided by the penalty when positive and
//    multiplied by it when negative. 1 is off.
//  - Presence and frequency penalties (OpenAI): over the output tokens only,
//    logit -= presence * [count > 0] + frequency * count.
// Invariants: tokens absent from the history are untouched; work is
// proportional to the history, not the vocabulary (TokenTally).
// Threading: pure functions over the caller's row and scratch.
// Tested by tests/sampling/penalties_test.cc.
#pragma once

#include <span>

#include "core/ids.h"
#include "sampling/token_tally.h"

namespace met {

void apply_repetition_penalty(float penalty, std::span<const TokenId> window, TokenTally& scratch,
                              std::span<float> logits);

void apply_presence_frequency(float presence, float frequency, std::span<const TokenId> output,
                              TokenTally& scratch, std::span<float> logits);

}  // namespace met
