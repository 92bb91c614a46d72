// Tests for the LZ penalty (src/sampling/lz_penalty.h).
#include "sampling/lz_penalty.h"

#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "sampling/sampler.h"

namespace met {
namespace {

// The definition in lz_penalty.h, the slow way: per candidate, per position.
std::vector<float> reference_lz(float alpha, size_t b, const std::vector<TokenId>& w, std::vector<float> logits) {
  const size_t n = w.size();
  if (n <= b) return logits;
  const double log2_v = std::log2(static_cast<double>(logits.size()));
  for (size_t v = 0; v < logits.size(); ++v) {
    size_t best_len = 0, best_d = 0;
    for (size_t p = b; p < n; ++p) {
      if (w[p] != static_cast<TokenId>(v)) continue;
      size_t u = 0;
      while (u < b && w[p - 1 - u] == w[n - 1 - u]) ++u;
      const size_t d = n - p;
      if (u + 1 > best_len || (u + 1 == best_len && d < best_d)) {
        best_len = u + 1;
        best_d = d;
      }
    }
    if (best_len == 0) continue;
    const double code = std::clamp(std::log2(static_cast<double>(best_d)), 0.0, log2_v);
    logits[v] -= static_cast<float>(alpha * (log2_v - code));
  }
  return logits;
}

TEST(LzPenalty, ChargesTheBitsSavedByTheBestCopy) {
  const std::vector<TokenId> window = {1, 2, 3, 4, 1, 2, 3};
  std::vector<float> logits(16, 0.0f);  // log2 V = 4 bits
  TokenTally scratch;
  apply_lz_penalty({.alpha = 0.5f, .buffer = 2}, window, scratch, logits);
  EXPECT_NEAR(logits[4], -0.5f * (4.0f - 2.0f), 1e-5f);              // extends "2 3" from distance 4
  EXPECT_NEAR(logits[1], -0.5f * (4.0f - std::log2(3.0f)), 1e-5f);  // a literal copy from distance 3
  EXPECT_NEAR(logits[2], -0.5f * (4.0f - 1.0f), 1e-5f);
  EXPECT_NEAR(logits[3], -0.5f * 4.0f, 1e-5f);                       // distance 1 costs 0 bits
  EXPECT_EQ(logits[5], 0.0f);                                        // never seen: no penalty
}

TEST(LzPenalty, DoesNothingUntilTheWindowExceedsTheBuffer) {
  const std::vector<TokenId> window = {1, 1, 1};
  std::vector<float> logits(16, 0.0f);
  TokenTally scratch;
  apply_lz_penalty({.alpha = 1.0f, .buffer = 3}, window, scratch, logits);
  for (float l : logits) EXPECT_EQ(l, 0.0f);
}

TEST(LzPenalty, MatchesAStraightforwardReferenceOnRandomWindows) {
  std::mt19937 rng(6);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<TokenId> window;
    for (int i = 0; i < 200; ++i) window.push_back(static_cast<TokenId>(rng() % 12));
    std::vector<float> logits(40, 0.5f);
    const std::vector<float> expected = reference_lz(0.2f, 8, window, logits);
    TokenTally scratch;
    apply_lz_penalty({.alpha = 0.2f, .buffer = 8}, window, scratch, logits);
    for (size_t v = 0; v < logits.size(); ++v) EXPECT_NEAR(logits[v], expected[v], 1e-4f) << v;
  }
}

TEST(LzPenalty, BreaksAGreedyLoop) {
  // A "model" that prefers continuing the loop 0 1 2 3 by one logit over
  // token 9; greedy decoding alone repeats forever.
  std::vector<TokenId> output;
  for (int i = 0; i < 40; ++i) output.push_back(i % 4);
  auto row = [&] {
    std::vector<float> logits(64, 0.0f);
    logits[static_cast<size_t>((output.back() + 1) % 4)] = 2.0f;
    logits[9] = 1.0f;
    return logits;
  };
  Sampler plain(SamplingParams{});
  std::vector<float> a = row();
  EXPECT_EQ(plain.sample(a, {}, output), 0);
  Sampler lz(SamplingParams{.lz_penalty = 0.5f});
  EXPECT_FALSE(lz.is_greedy());
  std::vector<float> b = row();
  EXPECT_EQ(lz.sample(b, {}, output), 9);
}

}  // namespace
}  // namespace met
