// DRY ("don't repeat yourself"), the chain's third step, with llama.cpp's
// definition (p-e-w's sampler, text-generation-webui PR 5677): for each
// earlier position i of `history` (the last repetition_penalty_window tokens
// of prompt+output) where history[i] equals the last token, the match length
// L is how many tokens ending at i equal the tokens ending at the last one,
// never reaching past a sequence breaker. The token that followed i,
// history[i+1], would extend a repeat of length L; each candidate keeps its
// longest L, and when L >= allowed_length its logit is lowered by
//     multiplier * base^(L - allowed_length).
// A breaker as the last token disables the penalty; a breaker is never
// penalized. The exponent is capped so the penalty stays finite.
// Threading: pure function over the caller's row and scratch.
// Tested by tests/sampling/dry_test.cc.
#pragma once

#include <span>

#include "core/ids.h"
#include "sampling/token_tally.h"

namespace met {

struct DryConfig {
  float multiplier = 0.0f;
  float base = 1.75f;
  int32_t allowed_length = 2;
  std::span<const TokenId> sequence_breakers = {};
};

void apply_dry(const DryConfig& config, std::span<const TokenId> history, TokenTally& scratch,
               std::span<float> logits);

}  // namespace met
