// Logprobs: the log-probability of a chosen token and of the most likely
// alternatives, defined as the model's log-softmax of the raw logits, before
// any step of the sampler chain (bias, penalties, temperature, truncation):
// what vLLM returns by default. The server documents it so.
//   logprob(t) = logit[t] - max - log(sum_j exp(logit[j] - max))
// rank(t) = 1 + the number of tokens with a strictly larger logit.
// top alternatives: the `num_top` largest logits, sorted by logprob
// descending, ties by smaller id first; -inf logits are never listed.
// Cost: two passes over the row (max; then the exp-sum and a bounded heap
// of num_top entries); no allocation but the returned vector.
// Threading: pure functions. Tested by tests/sampling/logprobs_test.cc.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/ids.h"

namespace met {

// The most alternatives a request may ask for (OpenAI's top_logprobs bound).
inline constexpr int32_t kMaxTopLogprobs = 20;

struct TopLogprob {
  TokenId token = 0;
  float logprob = 0.0f;
};

struct TokenLogprob {
  TokenId token = 0;
  float logprob = 0.0f;
  int32_t rank = 1;
  std::vector<TopLogprob> top;  // at most the num_top asked for
};

// REQUIRES: 0 <= chosen < logits.size(); 0 <= num_top <= kMaxTopLogprobs.
TokenLogprob token_logprob(std::span<const float> logits, TokenId chosen, int32_t num_top);

// log(sum_j exp(logits[j])), computed stably; -inf for an empty or all -inf row.
float log_sum_exp(std::span<const float> logits);

}  // namespace met
