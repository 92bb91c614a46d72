// Sampler: picks the next token from a row of logits through this chain,
// in this order, each step skipped when inactive:
//   1. logit_bias, allowed_token_ids, bad_words (token_bans.h);
//   2. repetition penalty over the last repetition_penalty_window tokens of
//      prompt+output; presence and frequency penalties over the output
//      (penalties.h);
//   3. DRY over the same window as the repetition penalty (dry.h);
//   4. the LZ penalty over the last lz_window output tokens (lz_penalty.h);
//   (5. min_tokens' EOS ban stays in the scheduler, before sample();
//    6. the grammar mask slot, a later issue);
//   7. temperature, or the adaptive one (adaptive_temperature.h); then top_k
//      (candidates.h), top_p, min_p, typical_p, top_n_sigma, XTC
//      (truncation.h);
//   8. a draw from the per-sequence RNG seeded by `seed`, so the same seed
//      gives the same tokens alone or in any batch.
// Temperature 0 or top_k 1 gives the argmax of the processed logits (first on
// ties).
// Invariants: the returned id is < logits.size(). No allocation per call
// after the first at a given vocabulary (scratch reused).
// Threading: one per sequence; one thread at a time.
// Tested by tests/sampling/sampler_test.cc.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <utility>
#include <vector>

#include "core/ids.h"
#include "core/status.h"
#include "sampling/adaptive_temperature.h"
#include "sampling/candidates.h"
#include "sampling/sampling_params.h"
#include "sampling/token_tally.h"

namespace met {

class Sampler {
 public:
  explicit Sampler(const SamplingParams& params);

  // Whether the pick is the argmax of the raw logits, so a device argmax can
  // stand in for sample(): temperature 0 or top_k 1, and no step that changes
  // logits active.
  bool is_greedy() const;

  // The full chain with the sequence's history; the row's logits are
  // processed in place.
  TokenId sample(std::span<float> logits, std::span<const TokenId> prompt, std::span<const TokenId> output);
  // For callers without history: the history-dependent steps see none.
  TokenId sample(std::span<const float> logits);

 private:
  bool changes_logits() const;
  void process(std::span<float> logits, std::span<const TokenId> prompt, std::span<const TokenId> output);
  TokenId draw_from(std::span<const float> logits);

  SamplingParams params_;
  std::mt19937_64 rng_;
  AdaptiveTemperature adaptive_;
  Candidates candidates_;
  TokenTally tally_;
  std::vector<float> row_;       // copy of a const row to process
  std::vector<float> saved_;     // allowed_token_ids scratch
  std::vector<TokenId> recent_;  // the window of prompt+output
  std::vector<std::pair<float, uint32_t>> typical_scratch_;
};

}  // namespace met
