// Tests for src/tokenizer/bpe_cache.h.
#include "tokenizer/bpe_cache.h"

#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace met {
namespace {

TEST(BpeCache, MissThenHitReturnsTheInsertedIds) {
  BpeCache cache(1024);
  std::vector<TokenId> out = {7};
  EXPECT_FALSE(cache.find("hello", out));
  const TokenId ids[] = {1, 2, 3};
  cache.insert("hello", ids);
  EXPECT_TRUE(cache.find("hello", out));
  EXPECT_EQ(out, (std::vector<TokenId>{7, 1, 2, 3}));
}

TEST(BpeCache, ZeroCapacityNeverHits) {
  BpeCache cache(0);
  const TokenId ids[] = {1};
  cache.insert("a", ids);
  std::vector<TokenId> out;
  EXPECT_FALSE(cache.find("a", out));
  EXPECT_EQ(cache.size(), 0u);
}

TEST(BpeCache, NeverHoldsMoreThanItsBound) {
  BpeCache cache(320);
  const TokenId ids[] = {1, 2};
  for (int i = 0; i < 10000; ++i) cache.insert("piece" + std::to_string(i), ids);
  EXPECT_LE(cache.size(), cache.max_entries());
  EXPECT_GT(cache.size(), 0u);
}

TEST(BpeCache, AnEntryInUseSurvivesRotations) {
  BpeCache cache(64);
  const TokenId ids[] = {5};
  cache.insert("hot", ids);
  std::vector<TokenId> out;
  for (int i = 0; i < 5000; ++i) {
    cache.insert("cold" + std::to_string(i), ids);
    out.clear();
    ASSERT_TRUE(cache.find("hot", out)) << i;
  }
}

TEST(BpeCache, ConcurrentInsertsAndFindsAreSafe) {
  BpeCache cache(4096);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&cache, t] {
      std::vector<TokenId> out;
      for (int i = 0; i < 2000; ++i) {
        const std::string key = "k" + std::to_string((i * 7 + t) % 500);
        const TokenId ids[] = {static_cast<TokenId>(key.size())};
        out.clear();
        if (cache.find(key, out)) {
          EXPECT_EQ(out.back(), static_cast<TokenId>(key.size()));
        } else {
          cache.insert(key, ids);
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
}

}  // namespace
}  // namespace met
