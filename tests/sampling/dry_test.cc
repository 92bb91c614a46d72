// Tests for DRY (src/sampling/dry.h).
#include "sampling/dry.h"

#include <cmath>
#include <random>

#include <gtest/gtest.h>

namespace met {
namespace {

// llama.cpp's definition, written the slow way: for every candidate, the
// longest suffix of history that, followed by the candidate, occurred before.
std::vector<float> reference_dry(const DryConfig& c, const std::vector<TokenId>& h, std::vector<float> logits) {
  auto breaker = [&](TokenId t) {
    return std::find(c.sequence_breakers.begin(), c.sequence_breakers.end(), t) != c.sequence_breakers.end();
  };
  const size_t n = h.size();
  if (n < 2 || breaker(h.back())) return logits;
  for (size_t v = 0; v < logits.size(); ++v) {
    if (breaker(static_cast<TokenId>(v))) continue;
    int best = 0;
    for (size_t i = 0; i + 1 < n; ++i) {
      if (h[i + 1] != static_cast<TokenId>(v)) continue;
      int len = 0;
      while (static_cast<size_t>(len) <= i && h[i - static_cast<size_t>(len)] == h[n - 1 - static_cast<size_t>(len)] &&
             !breaker(h[i - static_cast<size_t>(len)])) {
        ++len;
      }
      best = std::max(best, len);
    }
    if (best >= c.allowed_length) logits[v] -= c.multiplier * std::pow(c.base, static_cast<float>(best - c.allowed_length));
  }
  return logits;
}

TEST(Dry, PenalizesTheTokenThatWouldContinueARepeat) {
  // "1 2 3 4 ... 1 2 3": continuing with 4 repeats a 3-token run.
  const std::vector<TokenId> history = {1, 2, 3, 4, 9, 8, 1, 2, 3};
  std::vector<float> logits(10, 0.0f);
  TokenTally scratch;
  apply_dry({.multiplier = 0.8f, .base = 1.75f, .allowed_length = 2}, history, scratch, logits);
  EXPECT_NEAR(logits[4], -0.8f * 1.75f, 1e-5f);  // length 3, allowed 2: base^1
  for (size_t v = 0; v < logits.size(); ++v) {
    if (v != 4) {
      EXPECT_EQ(logits[v], 0.0f) << v;
    }
  }
}

TEST(Dry, SequenceBreakersStopTheMatch) {
  const std::vector<TokenId> history = {1, 2, 3, 4, 9, 8, 1, 2, 3};
  std::vector<float> logits(10, 0.0f);
  TokenTally scratch;
  const std::vector<TokenId> breakers = {2};
  apply_dry({.multiplier = 0.8f, .base = 1.75f, .allowed_length = 2, .sequence_breakers = breakers}, history,
            scratch, logits);
  EXPECT_EQ(logits[4], 0.0f);  // the match "3" stops at the breaker 2: length 1 < 2
}

TEST(Dry, MatchesAStraightforwardReferenceOnRandomHistories) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<TokenId> history;
    for (int i = 0; i < 120; ++i) history.push_back(static_cast<TokenId>(rng() % 6));
    const std::vector<TokenId> breakers = {5};
    const DryConfig c{.multiplier = 0.5f, .base = 1.5f, .allowed_length = 2, .sequence_breakers = breakers};
    std::vector<float> logits(8, 1.0f);
    const std::vector<float> expected = reference_dry(c, history, logits);
    TokenTally scratch;
    apply_dry(c, history, scratch, logits);
    for (size_t v = 0; v < logits.size(); ++v) EXPECT_NEAR(logits[v], expected[v], 1e-3f * std::abs(expected[v]) + 1e-4f);
  }
}

TEST(Dry, ALongLoopGetsAFinitePenalty) {
  std::vector<TokenId> history(256, 7);
  std::vector<float> logits(10, 0.0f);
  TokenTally scratch;
  apply_dry({.multiplier = 1.0f, .base = 3.0f, .allowed_length = 1}, history, scratch, logits);
  EXPECT_TRUE(std::isfinite(logits[7]));
  EXPECT_LT(logits[7], -1e20f);
}

}  // namespace
}  // namespace met
