// Sampler: picks the next token from a row of logits: greedy when the
// temperature is 0, else temperature, then top-k, then top-p (nucleus), then
// a draw from a per-sequence RNG seeded by `seed`, so the same seed gives the
// same tokens alone or in any batch. (The full chain — penalties, DRY, min-p,
// grammar — is a later issue; it extends this class.)
// Invariants: the returned id is < logits.size(); a greedy pick is the argmax
// (first on ties). No allocation per call after the first (scratch reused).
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

namespace met {

struct SamplingParams {
  float temperature = 0.0f;  // 0: greedy
  int32_t top_k = 0;         // 0: off
  float top_p = 1.0f;        // 1: off
  uint64_t seed = 0;
};

// Checks ranges; the message names the parameter.
Status validate_sampling(const SamplingParams& p);

class Sampler {
 public:
  explicit Sampler(const SamplingParams& params);

  bool is_greedy() const { return params_.temperature <= 0.0f || params_.top_k == 1; }
  TokenId sample(std::span<const float> logits);

 private:
  SamplingParams params_;
  std::mt19937_64 rng_;
  std::vector<std::pair<float, TokenId>> candidates_;
};

}  // namespace met
