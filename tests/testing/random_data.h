// Seeded random inputs for tests: the same values on every run of one build.
// GCC's and clang's builds draw different normals (clang fuses the polar
// method's x * x + y * y into one FMA, its default -ffp-contract=on; GCC at
// -O0 to -O2 does not), so tests must hold for any draw.
// UniformFloat and NormalFloat draw, bit for bit, what libstdc++'s
// std::uniform_real_distribution<float> and std::normal_distribution<float>
// draw from the same 32- or 64-bit engine (tests/core/random_data_test.cc
// compares them), without the long-double logarithm std::generate_canonical
// takes on every draw where the compiler does not fold it (clang, at any
// level): that logarithm and its caller were a third of the sanitizer
// build's backend test time.
// Test-only.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "core/ids.h"

namespace met::testing {

// std::generate_canonical<float, 24>(rng) for an engine of 32 or 64 bits:
// one draw, rounded to float once and scaled by the engine's range.
template <class Engine>
float canonical_float(Engine& rng) {
  static_assert(Engine::min() == 0 && (Engine::max() == 0xFFFFFFFFu || Engine::max() == ~uint64_t{0}),
                "an engine of 32 or 64 bits");
  constexpr float kScale = Engine::max() == 0xFFFFFFFFu ? 0x1p-32f : 0x1p-64f;
  const float u = static_cast<float>(rng()) * kScale;
  return u >= 1.0f ? std::nextafter(1.0f, 0.0f) : u;
}

// std::uniform_real_distribution<float>(a, b).
class UniformFloat {
 public:
  UniformFloat(float a, float b) : a_(a), b_(b) {}
  template <class Engine>
  float operator()(Engine& rng) {
    return canonical_float(rng) * (b_ - a_) + a_;
  }

 private:
  float a_, b_;
};

// std::normal_distribution<float>(mean, stddev): the polar method, each
// accepted pair giving one value now and keeping the other for the next call.
class NormalFloat {
 public:
  NormalFloat(float mean, float stddev) : mean_(mean), stddev_(stddev) {}
  template <class Engine>
  float operator()(Engine& rng) {
    float ret;
    if (saved_available_) {
      saved_available_ = false;
      ret = saved_;
    } else {
      float x, y, r2;
      do {  // the double literals are libstdc++'s: each difference rounds to float once
        x = static_cast<float>(2.0f * canonical_float(rng) - 1.0);
        y = static_cast<float>(2.0f * canonical_float(rng) - 1.0);
        r2 = x * x + y * y;
      } while (r2 > 1.0 || r2 == 0.0);
      const float mult = std::sqrt(-2 * std::log(r2) / r2);
      saved_ = x * mult;
      saved_available_ = true;
      ret = y * mult;
    }
    return ret * stddev_ + mean_;
  }

 private:
  float mean_, stddev_;
  float saved_ = 0.0f;
  bool saved_available_ = false;
};

// n draws of N(0, sigma^2) from mt19937(seed).
inline std::vector<float> gaussian(size_t n, uint32_t seed, float sigma = 1.0f) {
  std::mt19937 rng(seed);
  NormalFloat dist(0.0f, sigma);
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
