// Token bans: the first step of the chain. logit_bias adds a bias per token
// (a bias <= -100 bans it outright), allowed_token_ids bans every token not
// listed, bad_words bans the last token of a sequence whose preceding tokens
// end the output so far (vLLM's semantics: the history is the output only, so
// a prompt never completes a bad word).
// Invariants: a banned token's logit is -inf; ids outside the row are
// ignored (the server checks them against the vocabulary).
// Threading: pure functions over the caller's row.
// Tested by tests/sampling/token_bans_test.cc.
#pragma once

#include <span>
#include <vector>

#include "core/ids.h"
#include "sampling/sampling_params.h"

namespace met {

void apply_logit_bias(std::span<const LogitBias> biases, std::span<float> logits);

// `saved` is scratch, reused across calls.
void apply_allowed_tokens(std::span<const TokenId> allowed, std::span<float> logits, std::vector<float>& saved);

void apply_bad_words(const std::vector<std::vector<TokenId>>& bad_words, std::span<const TokenId> output,
                     std::span<float> logits);

}  // namespace met
