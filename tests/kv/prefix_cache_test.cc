// Tests for PrefixCache (src/kv/prefix_cache.h).
#include "kv/kv_block.h"
#include "kv/prefix_cache.h"

#include <numeric>
#include <optional>
#include <span>

#include <gtest/gtest.h>

#include "backend/step_plan.h"
#include "kv/kv_event_sink.h"
#include "testing/allocation_counter.h"

namespace met {
namespace {

constexpr int32_t B = kKvBlockTokens;

std::vector<TokenId> prompt(int32_t n, TokenId first = 1) {
  std::vector<TokenId> t(static_cast<size_t>(n));
  std::iota(t.begin(), t.end(), first);
  return t;
}

// A sequence that prefilled `tokens` into fresh blocks and registered them.
std::vector<BlockId> prefill_and_register(BlockPool& pool, PrefixCache& cache,
                                          const std::vector<TokenId>& tokens, CacheSalt salt = {}) {
  std::vector<BlockId> table;
  const int32_t n = static_cast<int32_t>(tokens.size());
  EXPECT_TRUE(pool.allocate_n((n + B - 1) / B, table));
  cache.register_blocks(tokens, n, table, salt);
  return table;
}

TEST(PrefixCache, EmptyCacheMatchesNothing) {
  BlockPool pool(8);
  PrefixCache cache(pool);
  std::vector<BlockId> table;
  const PrefixMatch m = cache.match(prompt(3 * B), {}, 10, table);
  EXPECT_EQ(m.num_blocks, 0);
  EXPECT_EQ(m.num_tokens, 0);
  EXPECT_TRUE(table.empty());
}

TEST(PrefixCache, MatchFindsTheRegisteredBlocksOfTheSamePrompt) {
  BlockPool pool(8);
  PrefixCache cache(pool);
  const std::vector<BlockId> owner = prefill_and_register(pool, cache, prompt(3 * B));
  std::vector<BlockId> table;
  const PrefixMatch m = cache.match(prompt(3 * B), {}, 10, table);
  EXPECT_EQ(m.num_blocks, 3);
  EXPECT_EQ(m.num_tokens, 3 * B);
  EXPECT_EQ(table, owner);
}

TEST(PrefixCache, MatchRetainsEachMatchedBlockAndAppendsToTheTable) {
  BlockPool pool(8);
  PrefixCache cache(pool);
  const std::vector<BlockId> owner = prefill_and_register(pool, cache, prompt(2 * B));
  std::vector<BlockId> table = {BlockId(7)};
  cache.match(prompt(2 * B), {}, 10, table);
  ASSERT_EQ(table.size(), 3u);
  EXPECT_EQ(table[0], BlockId(7));
  EXPECT_EQ(pool.ref_count(owner[0]), 2);
  EXPECT_EQ(pool.ref_count(owner[1]), 2);
}

TEST(PrefixCache, MatchReturnsTheLongestCachedChain) {
  BlockPool pool(8);
  PrefixCache cache(pool);
  prefill_and_register(pool, cache, prompt(3 * B));
  std::vector<TokenId> query = prompt(4 * B);
  query[2 * B + 5] = -1;  // the third block differs
  std::vector<BlockId> table;
  EXPECT_EQ(cache.match(query, {}, 10, table).num_blocks, 2);
}

TEST(PrefixCache, MatchIgnoresAPartialLastBlock) {
  BlockPool pool(8);
  PrefixCache cache(pool);
  prefill_and_register(pool, cache, prompt(3 * B));
  std::vector<BlockId> table;
  EXPECT_EQ(cache.match(prompt(3 * B - 1), {}, 10, table).num_blocks, 2);
}

TEST(PrefixCache, MatchRespectsMaxBlocks) {
  BlockPool pool(8);
  PrefixCache cache(pool);
  prefill_and_register(pool, cache, prompt(3 * B));
  std::vector<BlockId> table;
  EXPECT_EQ(cache.match(prompt(3 * B), {}, 2, table).num_blocks, 2);
  EXPECT_EQ(table.size(), 2u);
  table.clear();
  EXPECT_EQ(cache.match(prompt(3 * B), {}, 0, table).num_blocks, 0);
  EXPECT_TRUE(table.empty());
}

TEST(PrefixCache, MatchNeverCrossesTenants) {
  BlockPool pool(8);
  PrefixCache cache(pool);
  prefill_and_register(pool, cache, prompt(2 * B), {.tenant = tenant_salt("acme")});
  std::vector<BlockId> table;
  EXPECT_EQ(cache.match(prompt(2 * B), {.tenant = tenant_salt("globex")}, 10, table).num_blocks, 0);
  EXPECT_EQ(cache.match(prompt(2 * B), {}, 10, table).num_blocks, 0);
  EXPECT_EQ(cache.match(prompt(2 * B), {.tenant = tenant_salt("acme")}, 10, table).num_blocks, 2);
}

TEST(PrefixCache, MatchNeverCrossesAdapters) {
  BlockPool pool(8);
  PrefixCache cache(pool);
  prefill_and_register(pool, cache, prompt(2 * B), {.adapter = 1});
  std::vector<BlockId> table;
  EXPECT_EQ(cache.match(prompt(2 * B), {.adapter = 2}, 10, table).num_blocks, 0);
  EXPECT_EQ(cache.match(prompt(2 * B), {}, 10, table).num_blocks, 0);
  EXPECT_EQ(cache.match(prompt(2 * B), {.adapter = 1}, 10, table).num_blocks, 2);
}

TEST(PrefixCache, MatchStopsAtTheFirstMissingBlock) {
  BlockPool pool(3);
  PrefixCache cache(pool);
  const std::vector<BlockId> owner = prefill_and_register(pool, cache, prompt(3 * B));
  pool.release(owner[1]);  // released first, so evicted first
  pool.release(owner[0]);
  pool.release(owner[2]);
  const BlockId taken = *pool.allocate();
  ASSERT_EQ(taken, owner[1]);
  std::vector<BlockId> table;
  const PrefixMatch m = cache.match(prompt(3 * B), {}, 10, table);
  EXPECT_EQ(m.num_blocks, 1);  // block 2 is still cached but unreachable
  EXPECT_EQ(table, std::vector<BlockId>{owner[0]});
  EXPECT_EQ(pool.ref_count(owner[2]), 0);
}

TEST(PrefixCache, RegisteredBlocksHitAfterTheirSequenceReleasesThem) {
  BlockPool pool(4);
  PrefixCache cache(pool);
  const std::vector<BlockId> owner = prefill_and_register(pool, cache, prompt(2 * B));
  pool.release_all(owner);
  ASSERT_EQ(pool.num_evictable(), 2);
  std::vector<BlockId> table;
  EXPECT_EQ(cache.match(prompt(2 * B + 3), {}, 10, table).num_blocks, 2);
  EXPECT_EQ(table, owner);
  EXPECT_EQ(pool.num_evictable(), 0);
  EXPECT_EQ(pool.num_in_use(), 2);
}

TEST(PrefixCache, RegisterKeysOnlyFullBlocksWithinNumTokens) {
  BlockPool pool(4);
  PrefixCache cache(pool);
  const std::vector<TokenId> tokens = prompt(3 * B);
  std::vector<BlockId> table;
  ASSERT_TRUE(pool.allocate_n(3, table));
  EXPECT_EQ(cache.register_blocks(tokens, 2 * B + 5, table, {}), 2);
  EXPECT_TRUE(pool.key_of(table[0]).has_value());
  EXPECT_TRUE(pool.key_of(table[1]).has_value());
  EXPECT_FALSE(pool.key_of(table[2]).has_value());
}

TEST(PrefixCache, RegisterGivesEachBlockItsChainKey) {
  BlockPool pool(4);
  PrefixCache cache(pool);
  const std::vector<TokenId> tokens = prompt(2 * B);
  const CacheSalt salt{.tenant = 3, .adapter = 4};
  const std::vector<BlockId> table = prefill_and_register(pool, cache, tokens, salt);
  std::vector<BlockKey> keys;
  chain_keys(tokens, salt, keys);
  EXPECT_EQ(pool.key_of(table[0]), keys[0]);
  EXPECT_EQ(pool.key_of(table[1]), keys[1]);
}

TEST(PrefixCache, RegisterSkipsBlocksThatAlreadyHaveAKey) {
  BlockPool pool(8);
  PrefixCache cache(pool);
  prefill_and_register(pool, cache, prompt(2 * B));
  // A second sequence reuses the two cached blocks and computes two more.
  std::vector<BlockId> table;
  ASSERT_EQ(cache.match(prompt(4 * B), {}, 10, table).num_blocks, 2);
  ASSERT_TRUE(pool.allocate_n(2, table));
  EXPECT_EQ(cache.register_blocks(prompt(4 * B), 4 * B, table, {}), 2);
  std::vector<BlockId> again;
  EXPECT_EQ(cache.match(prompt(4 * B), {}, 10, again).num_blocks, 4);
  EXPECT_EQ(again, table);
}

TEST(PrefixCache, RegisterLeavesADuplicateBlockUnkeyed) {
  BlockPool pool(8);
  PrefixCache cache(pool);
  const std::vector<BlockId> first = prefill_and_register(pool, cache, prompt(2 * B));
  std::vector<BlockId> twin;  // the same prompt, computed again in other blocks
  ASSERT_TRUE(pool.allocate_n(2, twin));
  EXPECT_EQ(cache.register_blocks(prompt(2 * B), 2 * B, twin, {}), 0);
  EXPECT_FALSE(pool.key_of(twin[0]).has_value());
  EXPECT_FALSE(pool.key_of(twin[1]).has_value());
  pool.release_all(twin);
  EXPECT_EQ(pool.num_evictable(), 0);  // the twin's blocks are simply free
  std::vector<BlockId> table;
  cache.match(prompt(2 * B), {}, 10, table);
  EXPECT_EQ(table, first);
}

TEST(PrefixCache, CountsQueriesAndHitTokens) {
  BlockPool pool(8);
  PrefixCache cache(pool);
  prefill_and_register(pool, cache, prompt(2 * B));
  std::vector<BlockId> table;
  cache.match(prompt(2 * B + 4), {}, 10, table);  // hits 2 blocks
  cache.match(prompt(B, 500), {}, 10, table);      // misses
  EXPECT_EQ(cache.num_queries(), 2);
  EXPECT_EQ(cache.num_hit_tokens(), 2 * B);
  EXPECT_EQ(cache.num_query_tokens(), 3 * B + 4);
}

TEST(PrefixCache, SteadyStateDoesNotAllocate) {
  BlockPool pool(16);
  PrefixCache cache(pool);
  const std::vector<TokenId> tokens = prompt(4 * B);
  std::vector<BlockId> table;
  table.reserve(8);
  const auto serve_one = [&] {
    table.clear();
    const PrefixMatch m = cache.match(tokens, {}, 3, table);
    ASSERT_TRUE(pool.allocate_n(4 - m.num_blocks, table));
    cache.register_blocks(tokens, 4 * B, table, {});
    pool.release_all(table);
  };
  serve_one();  // grows the cache's scratch keys
  const int64_t before = testing::num_allocations();
  for (int i = 0; i < 10; ++i) serve_one();
  EXPECT_EQ(testing::num_allocations() - before, 0);
}

// Records what the prefix cache and its pool report.
struct RecordingEventSink final : KvEventSink {
  struct Stored {
    BlockKey key;
    std::optional<BlockKey> parent;
    std::vector<TokenId> tokens;
    uint64_t adapter = 0;
  };
  void block_stored(const BlockKey& key, const std::optional<BlockKey>& parent, std::span<const TokenId> tokens,
                    uint64_t adapter) override {
    stored.push_back(Stored{key, parent, {tokens.begin(), tokens.end()}, adapter});
  }
  void block_removed(const BlockKey& key) override { removed.push_back(key); }
  void all_blocks_cleared() override { ++num_cleared; }
  std::vector<Stored> stored;
  std::vector<BlockKey> removed;
  int num_cleared = 0;
};

TEST(PrefixCacheEvents, RegisteringReportsEachNewKeyWithItsParentTokensAndAdapter) {
  BlockPool pool(8);
  PrefixCache cache(pool);
  RecordingEventSink sink;
  pool.set_event_sink(&sink);
  const std::vector<TokenId> tokens = prompt(2 * B + 3);
  prefill_and_register(pool, cache, tokens, CacheSalt{.tenant = 0, .adapter = 7});
  std::vector<BlockKey> keys;
  chain_keys(tokens, CacheSalt{.tenant = 0, .adapter = 7}, keys);
  ASSERT_EQ(sink.stored.size(), 2u);
  EXPECT_EQ(sink.stored[0].key, keys[0]);
  EXPECT_FALSE(sink.stored[0].parent.has_value());
  EXPECT_EQ(sink.stored[0].tokens, std::vector<TokenId>(tokens.begin(), tokens.begin() + B));
  EXPECT_EQ(sink.stored[0].adapter, 7u);
  EXPECT_EQ(sink.stored[1].key, keys[1]);
  EXPECT_EQ(sink.stored[1].parent, std::optional(keys[0]));
  EXPECT_EQ(sink.stored[1].tokens, std::vector<TokenId>(tokens.begin() + B, tokens.begin() + 2 * B));
}

TEST(PrefixCacheEvents, AKeyAlreadyCachedIsNotReportedAgain) {
  BlockPool pool(8);
  PrefixCache cache(pool);
  RecordingEventSink sink;
  pool.set_event_sink(&sink);
  prefill_and_register(pool, cache, prompt(2 * B));
  prefill_and_register(pool, cache, prompt(2 * B));  // same keys, other blocks: they stay unkeyed
  EXPECT_EQ(sink.stored.size(), 2u);
}

TEST(PrefixCacheEvents, EvictionReportsTheDroppedKeyAndTheCachedKeysFollow) {
  BlockPool pool(2);
  PrefixCache cache(pool);
  RecordingEventSink sink;
  pool.set_event_sink(&sink);
  std::vector<BlockId> table = prefill_and_register(pool, cache, prompt(2 * B));
  pool.release_all(table);
  std::vector<BlockKey> keys;
  chain_keys(prompt(2 * B), {}, keys);
  // Evicts the least recently released: the table went back tail first, so
  // block 1's key, and the head a shorter match still uses stays.
  ASSERT_TRUE(pool.allocate().has_value());
  ASSERT_EQ(sink.removed.size(), 1u);
  EXPECT_EQ(sink.removed[0], keys[1]);
  std::vector<BlockKey> cached;
  cache.append_cached_keys(cached);
  EXPECT_EQ(cached, std::vector<BlockKey>{keys[0]});
  EXPECT_EQ(sink.num_cleared, 0);
}

}  // namespace
}  // namespace met
