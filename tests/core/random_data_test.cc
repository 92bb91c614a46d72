// tests/testing/random_data.h: its fast draws equal libstdc++'s, bit for bit,
// so switching a test from std::normal_distribution<float> or
// std::uniform_real_distribution<float> to them changes none of its inputs.
#include "testing/random_data.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

namespace met::testing {
namespace {

// How many of n draws of `ours` and `theirs` (each on its own engine seeded
// with `seed`) differ in their bits; the first few are reported.
template <class Engine, class Ours, class Theirs>
int differing_draws(uint32_t seed, int n, Ours ours, Theirs theirs) {
  Engine a(seed), b(seed);
  int differ = 0;
  for (int i = 0; i < n; ++i) {
    const float x = ours(a), y = theirs(b);
    if (std::memcmp(&x, &y, sizeof(float)) == 0) continue;
    if (++differ <= 3) ADD_FAILURE() << "draw " << i << ": " << x << " against libstdc++'s " << y;
  }
  return differ;
}

template <class Engine>
void expect_same_draws() {
  for (const auto& [a, b] : {std::pair{0.0f, 1.0f}, {-0.3f, 0.3f}, {-4.0f, 1.0f}, {0.05f, 0.95f}}) {
    EXPECT_EQ((differing_draws<Engine>(7, 100000, UniformFloat(a, b), std::uniform_real_distribution<float>(a, b))),
              0)
        << "uniform on [" << a << ", " << b << ")";
  }
  for (const auto& [mean, stddev] : {std::pair{0.0f, 1.0f}, {0.5f, 3.0f}, {0.0f, 0.05f}}) {
    EXPECT_EQ((differing_draws<Engine>(11, 100000, NormalFloat(mean, stddev),
                                       std::normal_distribution<float>(mean, stddev))),
              0)
        << "normal (" << mean << ", " << stddev << ")";
  }
}

TEST(RandomData, DrawsEqualLibstdcxxOnA32BitEngine) { expect_same_draws<std::mt19937>(); }

TEST(RandomData, DrawsEqualLibstdcxxOnA64BitEngine) { expect_same_draws<std::mt19937_64>(); }

TEST(RandomData, CanonicalFloatStaysBelowOne) {
  // An engine whose every draw is its maximum: the float rounds up to 1.
  struct Top {
    using result_type = uint32_t;
    static constexpr result_type min() { return 0; }
    static constexpr result_type max() { return 0xFFFFFFFFu; }
    result_type operator()() { return max(); }
  } top;
  EXPECT_EQ(canonical_float(top), std::nextafter(1.0f, 0.0f));
  EXPECT_EQ(canonical_float(top), (std::generate_canonical<float, 24>(top)));
}

}  // namespace
}  // namespace met::testing
