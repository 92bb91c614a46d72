// Tests for Candidates (src/sampling/candidates.h).
#include "sampling/candidates.h"

#include <algorithm>
#include <random>

#include <gtest/gtest.h>

namespace met {
namespace {

std::vector<Candidate> reference_sorted(const std::vector<float>& logits) {
  std::vector<Candidate> all;
  for (size_t i = 0; i < logits.size(); ++i) all.push_back({logits[i], static_cast<TokenId>(i)});
  std::sort(all.begin(), all.end(), ranks_before);
  return all;
}

std::vector<float> tied_logits(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> coarse(0, 50);  // many ties
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(coarse(rng)) / 4.0f;
  return v;
}

TEST(Candidates, TopKEqualsTheFirstKOfAFullSort) {
  for (size_t k : {1u, 5u, 40u, 300u, 1000u}) {
    const std::vector<float> logits = tied_logits(1000, static_cast<uint32_t>(k));
    const auto expected = reference_sorted(logits);
    Candidates c;
    c.assign_top_k(logits, k);
    ASSERT_EQ(c.size(), k);
    for (size_t i = 0; i < k; ++i) {
      EXPECT_EQ(c.items()[i].id, expected[i].id) << "k " << k << " i " << i;
    }
  }
}

TEST(Candidates, TopKOfAFullSizeRowSkipsChunksBelowTheFloorAndStillMatches) {
  for (size_t k : {1u, 40u, 64u}) {
    const std::vector<float> logits = tied_logits(152064 + 7, static_cast<uint32_t>(k) + 100);
    const auto expected = reference_sorted(logits);
    Candidates c;
    c.assign_top_k(logits, k);
    ASSERT_EQ(c.size(), k);
    for (size_t i = 0; i < k; ++i) EXPECT_EQ(c.items()[i].id, expected[i].id) << "k " << k << " i " << i;
  }
}

TEST(Candidates, SortPrefixGrowsTheSortedPrefix) {
  const std::vector<float> logits = tied_logits(500, 9);
  const auto expected = reference_sorted(logits);
  Candidates c;
  c.assign_all(logits);
  c.sort_prefix(10);
  c.sort_prefix(70);
  ASSERT_GE(c.num_sorted(), 70u);
  for (size_t i = 0; i < 70; ++i) EXPECT_EQ(c.items()[i].id, expected[i].id) << i;
}

TEST(Candidates, KeepIfKeepsOrderAndTheSortedPrefix) {
  const std::vector<float> logits = tied_logits(200, 11);
  Candidates c;
  c.assign_all(logits);
  c.sort_prefix(20);
  c.keep_if([](const Candidate& x, size_t) { return x.id % 2 == 0; });
  for (size_t i = 1; i < c.num_sorted(); ++i) EXPECT_FALSE(ranks_before(c.items()[i], c.items()[i - 1]));
  for (const Candidate& x : c.items()) EXPECT_EQ(x.id % 2, 0);
}

TEST(Candidates, SortPrefixAtLeastSortsExactlyTheCandidatesAtOrAboveTheFloor) {
  for (size_t n : {1u, 7u, 8u, 9u, 500u, 4099u}) {
    for (float floor : {-100.0f, 0.0f, 5.25f, 12.5f, 100.0f}) {
      const std::vector<float> logits = tied_logits(n, static_cast<uint32_t>(n) + 3);
      const auto expected = reference_sorted(logits);
      size_t num_above = 0;
      while (num_above < n && expected[num_above].logit >= floor) ++num_above;
      Candidates c;
      c.assign_all(logits);
      c.sort_prefix_at_least(floor);
      ASSERT_EQ(c.num_sorted(), num_above) << n << " " << floor;
      ASSERT_EQ(c.size(), n);
      for (size_t i = 0; i < num_above; ++i) EXPECT_EQ(c.items()[i].id, expected[i].id) << n << " i " << i;
      std::vector<TokenId> all;
      for (const Candidate& x : c.items()) all.push_back(x.id);
      std::sort(all.begin(), all.end());
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(all[i], static_cast<TokenId>(i));  // still the whole row
    }
  }
}

}  // namespace
}  // namespace met
