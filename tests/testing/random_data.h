// Seeded random inputs for tests: the same values on every run and host.
// Test-only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

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

}  // namespace met::testing
