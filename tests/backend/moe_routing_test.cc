// Tests for moe_routing.h: routing against a brute-force definition (sort all
// experts by probability in double), the counting sort's stability and
// inverse map, gathering, and the weighted combine in choice order.
#include "backend/cpu/kernels/moe_routing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "testing/random_data.h"

namespace met::cpu {
namespace {

struct Routed {
  std::vector<int32_t> ids;
  std::vector<double> weights;
};

// The definition: softmax in double, a stable sort by descending probability
// (the lower expert first on ties), the first k, optionally renormalised.
Routed route_definition(const std::vector<float>& logits, int32_t k, bool normalize) {
  const size_t n = logits.size();
  const double mx = *std::max_element(logits.begin(), logits.end());
  std::vector<double> p(n);
  double sum = 0;
  for (size_t e = 0; e < n; ++e) sum += (p[e] = std::exp(logits[e] - mx));
  for (double& v : p) v /= sum;
  std::vector<int32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return p[a] > p[b]; });
  Routed r;
  for (int32_t j = 0; j < k; ++j) {
    r.ids.push_back(order[j]);
    r.weights.push_back(p[order[j]]);
  }
  if (normalize) {
    const double s = std::accumulate(r.weights.begin(), r.weights.end(), 0.0);
    for (double& w : r.weights) w /= std::max(s, 6.103515625e-5);
  }
  return r;
}

// gpt-oss's order (llama.cpp's SOFTMAX_WEIGHT): the k largest logits
// (stable: the lower expert on ties), then a softmax over those k only.
Routed route_softmax_definition(const std::vector<float>& logits, int32_t k) {
  std::vector<int32_t> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  Routed r;
  double sum = 0;
  for (int32_t j = 0; j < k; ++j) {
    r.ids.push_back(order[j]);
    r.weights.push_back(std::exp(static_cast<double>(logits[order[j]]) - logits[order[0]]));
    sum += r.weights.back();
  }
  for (double& w : r.weights) w /= sum;
  return r;
}

TEST(RouteTopKSoftmax, MatchesTheDefinitionIncludingTies) {
  std::mt19937 rng(5);
  met::testing::NormalFloat g(0.0f, 3.0f);
  for (int32_t n : {1, 4, 32, 128}) {
    for (int32_t k : {1, 2, 4}) {
      if (k > n) continue;
      std::vector<float> logits(static_cast<size_t>(n));
      for (float& x : logits) x = g(rng);
      if (n >= 4) logits[3] = logits[1];  // a tie: expert 1 ranks first
      std::vector<int32_t> ids(static_cast<size_t>(k));
      std::vector<float> w(static_cast<size_t>(k));
      route_top_k_softmax(logits.data(), n, k, ids.data(), w.data());
      const Routed want = route_softmax_definition(logits, k);
      EXPECT_EQ(ids, want.ids) << n << " experts, k " << k;
      for (int32_t j = 0; j < k; ++j) EXPECT_NEAR(w[j], want.weights[j], 2e-6) << n << " experts, k " << k;
    }
  }
}

TEST(RouteTopK, MatchesTheDefinitionOnRandomLogits) {
  std::mt19937 rng(3);
  met::testing::NormalFloat g(0.0f, 2.0f);
  for (int32_t n : {1, 2, 8, 60, 128, 512}) {
    for (int32_t k : {1, 2, 4, 8}) {
      if (k > n) continue;
      for (bool normalize : {false, true}) {
        std::vector<float> logits(static_cast<size_t>(n));
        for (float& x : logits) x = g(rng);
        std::vector<int32_t> ids(static_cast<size_t>(k));
        std::vector<float> w(static_cast<size_t>(k));
        route_top_k(logits.data(), n, k, normalize, ids.data(), w.data());
        const Routed want = route_definition(logits, k, normalize);
        EXPECT_EQ(ids, want.ids) << n << " experts, k " << k;
        for (int32_t j = 0; j < k; ++j) EXPECT_NEAR(w[j], want.weights[j], 2e-6 * (1 + want.weights[j]));
      }
    }
  }
}

TEST(RouteTopK, TiesGoToTheLowerExpertAndNormalisedWeightsSumToOne) {
  const std::vector<float> logits = {0.5f, 2.0f, 2.0f, -1.0f, 2.0f};
  int32_t ids[3];
  float w[3];
  route_top_k(logits.data(), 5, 3, true, ids, w);
  EXPECT_EQ(std::vector<int32_t>(ids, ids + 3), (std::vector<int32_t>{1, 2, 4}));
  EXPECT_NEAR(w[0] + w[1] + w[2], 1.0f, 1e-6f);
  EXPECT_FLOAT_EQ(w[0], w[1]);
}

TEST(RouteTopK, UnnormalisedWeightsAreTheSoftmaxProbabilities) {
  const std::vector<float> logits = {0.0f, std::log(3.0f)};
  int32_t id;
  float w;
  route_top_k(logits.data(), 2, 1, false, &id, &w);
  EXPECT_EQ(id, 1);
  EXPECT_NEAR(w, 0.75f, 1e-6f);
}

TEST(GroupByExpert, IsAStableCountingSortWithItsInverse) {
  std::mt19937 rng(9);
  const int32_t n = 7, k = 3;
  const int64_t rows = 23;
  std::vector<int32_t> ids(static_cast<size_t>(rows * k));
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<int32_t> all(n);
    std::iota(all.begin(), all.end(), 0);
    std::shuffle(all.begin(), all.end(), rng);
    // Expert 6 is never chosen: its group is empty.
    all.erase(std::find(all.begin(), all.end(), 6));
    std::copy(all.begin(), all.begin() + k, ids.begin() + r * k);
  }
  std::vector<int32_t> offsets(n + 1), slot_row(ids.size()), pair_slot(ids.size());
  group_by_expert(ids.data(), rows, k, n, offsets.data(), slot_row.data(), pair_slot.data());
  EXPECT_EQ(offsets[0], 0);
  EXPECT_EQ(offsets[n], rows * k);
  EXPECT_EQ(offsets[6], offsets[7]);
  for (int32_t e = 0; e < n; ++e) {
    std::vector<int32_t> want;
    for (int64_t p = 0; p < rows * k; ++p) {
      if (ids[static_cast<size_t>(p)] == e) want.push_back(static_cast<int32_t>(p / k));
    }
    EXPECT_EQ(std::vector<int32_t>(slot_row.begin() + offsets[e], slot_row.begin() + offsets[e + 1]), want)
        << "expert " << e;
  }
  for (int64_t p = 0; p < rows * k; ++p) {
    const int32_t s = pair_slot[static_cast<size_t>(p)];
    EXPECT_EQ(slot_row[static_cast<size_t>(s)], p / k);
    EXPECT_TRUE(offsets[ids[static_cast<size_t>(p)]] <= s && s < offsets[ids[static_cast<size_t>(p)] + 1]);
  }
}

TEST(GatherRows, CopiesEachSlotsSourceRow) {
  const std::vector<uint8_t> src = {1, 2, 3, 4, 5, 6};  // three rows of two bytes
  const std::vector<int32_t> slot_row = {2, 0, 2, 1};
  std::vector<uint8_t> dst(8, 0);
  gather_rows(src.data(), 2, slot_row.data(), 1, 4, dst.data());
  EXPECT_EQ(dst, (std::vector<uint8_t>{0, 0, 1, 2, 5, 6, 3, 4}));
}

TEST(CombineExperts, SumsTheWeightedRowsInChoiceOrder) {
  const std::vector<float> out = {1, 2, 10, 20, 100, 200};  // three slots of width 2
  const int32_t slots[] = {2, 0};
  const float w[] = {0.25f, 0.5f};
  float y[2];
  combine_experts(out.data(), 2, slots, w, 2, y);
  EXPECT_FLOAT_EQ(y[0], 0.25f * 100 + 0.5f * 1);
  EXPECT_FLOAT_EQ(y[1], 0.25f * 200 + 0.5f * 2);
}

}  // namespace
}  // namespace met::cpu
