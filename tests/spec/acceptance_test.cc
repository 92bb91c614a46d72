// Tests for the acceptance rule: greedy prefix cases, worked sampled cases,
// and a chi-square test that the sampled rule leaves the committed token
// distributed exactly as the target's distribution, with negative controls
// that show the same check fails for rules that are not exact.
#include "spec/acceptance.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace met {
namespace {

using Ids = std::vector<TokenId>;
using Probs = std::vector<TokenProb>;

TEST(AcceptGreedy, AllDraftsMatchingCommitsThemAndTheTokenAfter) {
  const GreedyVerdict v = accept_greedy(Ids{4, 5, 6}, Ids{4, 5, 6, 9});
  EXPECT_EQ(v.num_accepted, 3);
  EXPECT_EQ(v.next, 9);
}

TEST(AcceptGreedy, TheFirstMismatchEndsTheAcceptedPrefixAndIsReplacedByTheArgmax) {
  GreedyVerdict v = accept_greedy(Ids{4, 5, 6}, Ids{4, 8, 6, 9});
  EXPECT_EQ(v.num_accepted, 1);
  EXPECT_EQ(v.next, 8) << "drafts after a mismatch are not kept, even when they match";
  v = accept_greedy(Ids{4, 5, 6}, Ids{3, 5, 6, 9});
  EXPECT_EQ(v.num_accepted, 0);
  EXPECT_EQ(v.next, 3);
}

TEST(AcceptGreedy, NoDraftsCommitsTheArgmax) {
  const GreedyVerdict v = accept_greedy(Ids{}, Ids{7});
  EXPECT_EQ(v.num_accepted, 0);
  EXPECT_EQ(v.next, 7);
}

TEST(AcceptTokenDraft, KeepsTheDraftWithTheTargetsProbabilityOfIt) {
  const Probs p = {{1, 0.5f}, {2, 0.5f}};
  EXPECT_TRUE(accept_token_draft(1, p, 0.49, 0.0).accepted);
  const DraftVerdict v = accept_token_draft(1, p, 0.5, 0.0);
  EXPECT_FALSE(v.accepted);
  EXPECT_EQ(v.token, 2);
}

TEST(AcceptTokenDraft, OnRejectionDrawsFromTheTargetWithoutTheDraft) {
  const Probs p = {{1, 0.2f}, {2, 0.3f}, {3, 0.5f}};  // without 3: 1 with 0.4, 2 with 0.6
  EXPECT_EQ(accept_token_draft(3, p, 0.9, 0.39).token, 1);
  EXPECT_EQ(accept_token_draft(3, p, 0.9, 0.41).token, 2);
  EXPECT_EQ(accept_token_draft(3, p, 0.9, 0.9999999).token, 2);
  const DraftVerdict unknown = accept_token_draft(42, p, 0.0, 0.1);
  EXPECT_FALSE(unknown.accepted) << "a draft the target cannot produce is always rejected";
  EXPECT_EQ(unknown.token, 1);
}

TEST(AcceptTokenDraft, ATargetThatIsAPointMassOnTheDraftNeverRejectsIt) {
  EXPECT_TRUE(accept_token_draft(5, Probs{{5, 1.0f}}, 0.9999999, 0.5).accepted);
  EXPECT_TRUE(accept_token_draft(5, Probs{{5, 0.99999994f}}, 0.9999999, 0.5).accepted)
      << "rounding below 1 leaves no residual to draw from";
}

TEST(AcceptTokenDraft, AGreedyTargetMakesTheRuleGreedy) {
  const Probs argmax_only = {{8, 1.0f}};
  EXPECT_TRUE(accept_token_draft(8, argmax_only, 0.3, 0.3).accepted);
  const DraftVerdict v = accept_token_draft(9, argmax_only, 0.3, 0.3);
  EXPECT_FALSE(v.accepted);
  EXPECT_EQ(v.token, 8);
}

TEST(AcceptSampledDraft, KeepsADraftTheTargetLikesAtLeastAsMuch) {
  const Probs p = {{1, 0.6f}, {2, 0.4f}};
  EXPECT_TRUE(accept_sampled_draft(1, p, Probs{{1, 0.5f}, {2, 0.5f}}, 0.9999999, 0.5).accepted);
}

TEST(AcceptSampledDraft, OnRejectionDrawsFromWhatTheTargetHasBeyondTheDraft) {
  const Probs p = {{1, 0.5f}, {2, 0.5f}};
  const Probs q = {{1, 0.8f}, {2, 0.2f}};  // keeps 1 with 0.5 / 0.8; the residual is all on 2
  EXPECT_TRUE(accept_sampled_draft(1, p, q, 0.62, 0.0).accepted);
  for (const double u : {0.0, 0.5, 0.9999999}) {
    const DraftVerdict v = accept_sampled_draft(1, p, q, 0.63, u);
    EXPECT_FALSE(v.accepted);
    EXPECT_EQ(v.token, 2);
  }
}

// --- Exactness: the committed token is distributed as p. ---

constexpr int64_t kDraws = 200000;
// Phi^-1(1 - 1e-4): the standard normal's upper 1e-4 quantile.
constexpr double kZ = 3.719016485455709;

// The chi-square critical value at significance 1e-4 (a fit passes when its
// p-value is above 1e-4) by the Wilson-Hilferty approximation
// k (1 - 2/(9k) + z sqrt(2/(9k)))^3. For df = 1, 2, 3, 5, 7 it gives 16.21,
// 19.29, 21.84, 26.32, 30.36 (exact: 15.14, 18.42, 21.11, 25.74, 29.88): a
// little above the exact values, so at few degrees of freedom the p-value
// threshold is a little below 1e-4 (about 7e-5 at df = 3).
double chi_square_critical(int df) {
  const double k = df;
  const double a = 2.0 / (9.0 * k);
  return k * std::pow(1.0 - a + kZ * std::sqrt(a), 3.0);
}

// A uniform draw in [0, 1) with 53 random bits.
double uniform(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

TokenId draw_from(const Probs& probs, double u) {
  double cumulative = 0.0;
  for (const TokenProb& e : probs) {
    cumulative += e.prob;
    if (u < cumulative) return e.id;
  }
  return probs.back().id;
}

struct Fit {
  double statistic = 0.0;
  int df = 0;
  int64_t outside_target = 0;  // committed tokens p gives no probability
};

constexpr TokenId kVocab = 64;

// Pearson's chi-square statistic of kDraws tokens from commit(rng) against p.
template <typename Commit>
Fit fit_to_target(const Probs& p, uint64_t seed, Commit commit) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> counts(kVocab, 0);
  for (int64_t i = 0; i < kDraws; ++i) ++counts[static_cast<size_t>(commit(rng))];
  double total = 0.0;
  for (const TokenProb& e : p) total += e.prob;
  Fit fit;
  fit.df = static_cast<int>(p.size()) - 1;
  int64_t inside = 0;
  for (const TokenProb& e : p) {
    const double expected = static_cast<double>(kDraws) * e.prob / total;
    const double observed = static_cast<double>(counts[static_cast<size_t>(e.id)]);
    fit.statistic += (observed - expected) * (observed - expected) / expected;
    inside += counts[static_cast<size_t>(e.id)];
  }
  fit.outside_target = kDraws - inside;
  return fit;
}

void expect_fits(const Fit& fit, const std::string& what) {
  const double critical = chi_square_critical(fit.df);
  EXPECT_EQ(fit.outside_target, 0) << what;
  EXPECT_LT(fit.statistic, critical) << what << ": chi-square " << fit.statistic << " with " << fit.df << " df";
  std::printf("  %-40s chi-square %8.2f  df %d  critical (p = 1e-4) %.2f\n", what.c_str(), fit.statistic, fit.df,
              critical);
}

// One sampled-draft position: d ~ q, then the rule.
TokenId commit_sampled(const Probs& p, const Probs& q, std::mt19937_64& rng) {
  const TokenId draft = draw_from(q, uniform(rng));
  const double u_accept = uniform(rng);
  return accept_sampled_draft(draft, p, q, u_accept, uniform(rng)).token;
}

const Probs kTarget = {{10, 0.5f}, {11, 0.3f}, {12, 0.15f}, {13, 0.05f}};

TEST(AcceptanceExactness, PointDraftsLeaveTheTargetsDistribution) {
  for (const TokenId draft : {11, 13, 10, 40}) {
    const Fit fit = fit_to_target(kTarget, 1000 + static_cast<uint64_t>(draft), [&](std::mt19937_64& rng) {
      const double u_accept = uniform(rng);
      return accept_token_draft(draft, kTarget, u_accept, uniform(rng)).token;
    });
    expect_fits(fit, "point draft " + std::to_string(draft));
  }
}

TEST(AcceptanceExactness, SampledDraftsLeaveTheTargetsDistribution) {
  const std::vector<std::pair<std::string, Probs>> drafts = {
      {"q = p", kTarget},
      {"q disjoint from p", {{20, 0.6f}, {21, 0.4f}}},
      {"q overlapping p", {{10, 0.1f}, {11, 0.6f}, {12, 0.1f}, {14, 0.2f}}},
      {"q uniform on p's tokens", {{10, 0.25f}, {11, 0.25f}, {12, 0.25f}, {13, 0.25f}}},
  };
  uint64_t seed = 2000;
  for (const auto& draft : drafts) {
    const Probs& q = draft.second;
    const Fit fit =
        fit_to_target(kTarget, ++seed, [&](std::mt19937_64& rng) { return commit_sampled(kTarget, q, rng); });
    expect_fits(fit, draft.first);
  }
}

// A random distribution over a random subset (at least two) of 8 tokens,
// sorted by id, each probability at least 1/80.
Probs random_distribution(std::mt19937_64& rng) {
  Probs probs;
  for (TokenId id = 0; id < 8; ++id) {
    const bool needed = id >= 6 && probs.size() < 2;
    if (rng() % 3 != 0 || needed) probs.push_back({id, 0.1f + 0.9f * static_cast<float>(uniform(rng))});
  }
  double total = 0.0;
  for (const TokenProb& e : probs) total += e.prob;
  for (TokenProb& e : probs) e.prob = static_cast<float>(e.prob / total);
  return probs;
}

TEST(AcceptanceExactness, RandomDraftAndTargetDistributions) {
  std::mt19937_64 shapes(18);
  for (int trial = 0; trial < 8; ++trial) {
    const Probs p = random_distribution(shapes);
    const Probs q = random_distribution(shapes);
    const Fit sampled = fit_to_target(p, 3000 + static_cast<uint64_t>(trial),
                                      [&](std::mt19937_64& rng) { return commit_sampled(p, q, rng); });
    expect_fits(sampled, "random p, q #" + std::to_string(trial));
    const TokenId draft = q.front().id;
    const Fit point = fit_to_target(p, 4000 + static_cast<uint64_t>(trial), [&](std::mt19937_64& rng) {
      const double u_accept = uniform(rng);
      return accept_token_draft(draft, p, u_accept, uniform(rng)).token;
    });
    expect_fits(point, "random p, point draft #" + std::to_string(trial));
  }
}

// Negative controls: two rules that are not exact fail the same check.
TEST(AcceptanceExactness, TheCheckRejectsRulesThatAreNotExact) {
  const Probs q = {{10, 0.25f}, {11, 0.25f}, {12, 0.25f}, {13, 0.25f}};
  const double critical = chi_square_critical(3);
  // Always committing the draft gives q, not p.
  const Fit always = fit_to_target(kTarget, 5001, [&](std::mt19937_64& rng) { return draw_from(q, uniform(rng)); });
  EXPECT_GT(always.statistic, critical);
  // Redrawing from p instead of the residual after a rejection gives
  // (0.40, 0.34, 0.195, 0.065), not (0.5, 0.3, 0.15, 0.05).
  const Fit redraw = fit_to_target(kTarget, 5002, [&](std::mt19937_64& rng) {
    const TokenId draft = draw_from(q, uniform(rng));
    const double u_accept = uniform(rng);
    const DraftVerdict v = accept_sampled_draft(draft, kTarget, q, u_accept, 0.0);
    return v.accepted ? v.token : draw_from(kTarget, uniform(rng));
  });
  EXPECT_GT(redraw.statistic, critical);
  std::printf("  controls: draft always %.1f, redraw from p %.1f; critical (df 3) %.2f\n", always.statistic,
              redraw.statistic, critical);
}

}  // namespace
}  // namespace met
