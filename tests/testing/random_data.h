// Seeded random inputs for tests: the same values on every run and host.
// Test-only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "core/ids.h"

namespace met::testing {

// n draws of N(0, sigma^2) from mt19937(seed).
inline std::vector<float> gaussian(size_t n, uint32_t seed, float sigma = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, sigma);
  std::vector<float> x(n);
  for (float& v : x) v = dist(rng);
  return x;
}

// gaussian() with every 97th value (from seed % 97) scaled by 20: a few
// outliers, as real activations and weights have.
inline std::vector<float> gaussian_with_outliers(size_t n, uint32_t seed, float sigma = 1.0f) {
  std::vector<float> x = gaussian(n, seed, sigma);
  for (size_t i = seed % 97; i < n; i += 97) x[i] *= 20.0f;
  return x;
}

// A prompt of n tokens from a seed (ids 10..409, never special
// in the test tokenizer; a plain LCG, so the same on every host).
inline std::vector<TokenId> make_prompt(int n, uint32_t seed) {
  std::vector<TokenId> p;
  uint32_t x = seed * 2654435761u + 12345u;
  for (int i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    p.push_back(static_cast<TokenId>(10 + (x >> 8) % 400));
  }
  return p;
}

}  // namespace met::testing
