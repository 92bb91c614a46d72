// SamplingParams: everything one request asks of the sampler, as plain data,
// and validate_sampling, which checks every field's range.
// Invariants: a default SamplingParams is greedy with every processor off.
// Threading: plain values, any thread.
// Tested by tests/sampling/sampling_params_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/ids.h"
#include "core/status.h"

namespace met {

struct LogitBias {
  TokenId token = 0;
  float bias = 0.0f;  // added to the logit; <= -100 bans the token
};

struct SamplingParams {
  float temperature = 0.0f;  // 0: greedy
  int32_t top_k = 0;         // 0: off
  float top_p = 1.0f;        // 1: off
  uint64_t seed = 0;

  // Bias and bans (token_bans.h).
  std::vector<LogitBias> logit_bias = {};
  std::optional<std::vector<TokenId>> allowed_token_ids = {};  // set: nothing else can be drawn
  std::vector<std::vector<TokenId>> bad_words = {};           // token-id sequences never completed

  // Penalties (penalties.h).
  float repetition_penalty = 1.0f;           // 1: off; over the last window of prompt+output
  int32_t repetition_penalty_window = 256;   // also DRY's window
  float presence_penalty = 0.0f;             // OpenAI semantics, over the output
  float frequency_penalty = 0.0f;

  // DRY (dry.h), llama.cpp's definition.
  float dry_multiplier = 0.0f;  // 0: off
  float dry_base = 1.75f;
  int32_t dry_allowed_length = 2;
  std::vector<TokenId> dry_sequence_breakers = {};

  // LZ penalty (lz_penalty.h), arXiv 2504.20131.
  float lz_penalty = 0.0f;   // 0: off; strength alpha
  int32_t lz_window = 512;   // tokens of output searched for matches
  int32_t lz_buffer = 32;    // longest match considered

  // Truncation (truncation.h), applied after the temperature.
  float min_p = 0.0f;        // 0: off
  float typical_p = 1.0f;    // 1: off
  float top_n_sigma = 0.0f;  // 0: off
  float xtc_probability = 0.0f;  // 0: off
  float xtc_threshold = 0.1f;

  // Adaptive temperature (adaptive_temperature.h), opt-in.
  bool adaptive_temperature = false;
  float adaptive_confidence = 0.9f;     // top-1 probability that counts as confident
  float adaptive_decay = 0.85f;         // temperature factor per confident token
  float adaptive_min_ratio = 0.3f;      // floor, as a fraction of `temperature`
  float adaptive_entropy_spike = 1.0f;  // nats above the running entropy that reset it
};

// Checks every field's range; the message names the field.
Status validate_sampling(const SamplingParams& p);

}  // namespace met
