// Tests for propose_prompt_lookup.
#include "spec/prompt_lookup.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "testing/allocation_counter.h"

namespace met {
namespace {

using TokenSeq = std::vector<TokenId>;

PromptLookupOptions options(int32_t min_n, int32_t max_n, int32_t max_draft) {
  return PromptLookupOptions{.min_n = min_n, .max_n = max_n, .max_draft = max_draft};
}

TokenSeq propose(const TokenSeq& history, const PromptLookupOptions& o) {
  TokenSeq drafts;
  propose_prompt_lookup(history, o, drafts);
  return drafts;
}

// The rule as stated, slowly: for n from max_n down to min_n, the tokens after
// the earliest occurrence of the last n tokens that ends before the last token.
TokenSeq reference_proposal(const TokenSeq& h, const PromptLookupOptions& o) {
  const auto size = static_cast<int64_t>(h.size());
  for (int64_t n = o.max_n; n >= o.min_n; --n) {
    if (n >= size) continue;
    for (int64_t start = 0; start + n < size; ++start) {
      if (!std::equal(h.begin() + start, h.begin() + start + n, h.end() - n)) continue;
      const int64_t stop = std::min(size, start + n + o.max_draft);
      return TokenSeq(h.begin() + start + n, h.begin() + stop);
    }
  }
  return {};
}

TEST(PromptLookup, PrefersTheLongestMatchingSuffix) {
  // "2 3" occurs first after 5, but "1 2 3" occurs only before 9.
  const TokenSeq h = {5, 2, 3, 8, 8, 1, 2, 3, 9, 9, 1, 2, 3};
  TokenSeq drafts;
  EXPECT_EQ(propose_prompt_lookup(h, options(1, 3, 2), drafts), 3);
  EXPECT_EQ(drafts, (TokenSeq{9, 9}));
  EXPECT_EQ(propose_prompt_lookup(h, options(1, 2, 2), drafts), 2) << "max_n caps the suffix looked for";
  EXPECT_EQ(drafts, (TokenSeq{8, 8}));
}

TEST(PromptLookup, TakesTheEarliestOfEqualMatchesAsVllmDoes) {
  EXPECT_EQ(propose({1, 2, 7, 1, 2, 8, 1, 2}, options(1, 2, 1)), (TokenSeq{7}));
  EXPECT_EQ(propose({3, 1, 2, 7, 4, 1, 2, 8, 1, 2}, options(1, 3, 1)), (TokenSeq{7}))
      << "the longest match is two tokens at both places";
}

TEST(PromptLookup, MaxNBoundsTheMatchLength) {
  const TokenSeq h = {9, 2, 3, 4, 50, 1, 2, 3, 4, 60, 1, 2, 3, 4};
  TokenSeq drafts;
  EXPECT_EQ(propose_prompt_lookup(h, options(1, 3, 1), drafts), 3);
  EXPECT_EQ(drafts, (TokenSeq{50})) << "with three tokens, the earliest \"2 3 4\" wins";
  EXPECT_EQ(propose_prompt_lookup(h, options(1, 4, 1), drafts), 4);
  EXPECT_EQ(drafts, (TokenSeq{60}));
}

TEST(PromptLookup, MatchesShorterThanMinNProposeNothing) {
  const TokenSeq h = {1, 2, 3, 9, 3};  // only "3" recurs
  EXPECT_EQ(propose(h, options(1, 3, 5)), (TokenSeq{9, 3}));
  TokenSeq drafts = {42};
  EXPECT_EQ(propose_prompt_lookup(h, options(2, 3, 5), drafts), 0);
  EXPECT_TRUE(drafts.empty()) << "the previous proposal is cleared";
}

TEST(PromptLookup, NoRecurrenceProposesNothing) {
  EXPECT_TRUE(propose({1, 2, 3, 4, 5}, options(1, 3, 4)).empty());
  EXPECT_TRUE(propose({7}, options(1, 3, 4)).empty());
  EXPECT_TRUE(propose({}, options(1, 3, 4)).empty());
}

TEST(PromptLookup, MaxDraftCapsTheProposal) {
  const TokenSeq h = {1, 2, 3, 4, 5, 6, 7, 8, 1, 2};
  EXPECT_EQ(propose(h, options(1, 2, 3)), (TokenSeq{3, 4, 5}));
  EXPECT_TRUE(propose(h, options(1, 2, 0)).empty());
}

TEST(PromptLookup, DraftsStopAtTheEndOfTheHistory) {
  EXPECT_EQ(propose({4, 5, 6, 4, 5}, options(1, 2, 10)), (TokenSeq{6, 4, 5}));
  EXPECT_EQ(propose({9, 8, 8}, options(1, 2, 10)), (TokenSeq{8}))
      << "the only earlier \"8\" ends just before the last token: one token follows it";
  EXPECT_EQ(propose({7, 7, 7, 7}, options(1, 2, 10)), (TokenSeq{7, 7})) << "occurrences may overlap the suffix";
}

TEST(PromptLookup, PromptAndOutputAsTwoSpansMatchOneHistory) {
  std::mt19937_64 rng(18);
  TokenSeq drafts;
  for (int trial = 0; trial < 300; ++trial) {
    TokenSeq h(rng() % 40);
    for (TokenId& t : h) t = static_cast<TokenId>(rng() % 4);
    const auto min_n = static_cast<int32_t>(1 + rng() % 3);
    const auto max_n = min_n + static_cast<int32_t>(rng() % 4);
    const PromptLookupOptions o = options(min_n, max_n, 1 + static_cast<int32_t>(rng() % 6));
    const TokenSeq expected = reference_proposal(h, o);
    ASSERT_EQ(propose(h, o), expected) << "trial " << trial;
    const size_t split = h.size() == 0 ? 0 : rng() % (h.size() + 1);
    const std::span<const TokenId> all(h);
    propose_prompt_lookup(all.first(split), all.subspan(split), o, drafts);
    ASSERT_EQ(drafts, expected) << "trial " << trial << " split at " << split;
  }
}

TEST(PromptLookup, AllocatesNothingOnceDraftsHasCapacity) {
  TokenSeq history(32768);
  std::mt19937_64 rng(7);
  for (TokenId& t : history) t = static_cast<TokenId>(rng() % 1000);
  TokenSeq drafts;
  drafts.reserve(8);
  const int64_t before = testing::num_allocations();
  for (int i = 0; i < 10; ++i) propose_prompt_lookup(history, options(1, 4, 8), drafts);
  EXPECT_EQ(testing::num_allocations() - before, 0);
}

}  // namespace
}  // namespace met
