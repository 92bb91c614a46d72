// Tests for BlockPool (src/kv/block_pool.h).
#include "kv/block_pool.h"

#include <algorithm>
#include <list>
#include <random>
#include <unordered_map>

#include <gtest/gtest.h>

#include "testing/allocation_counter.h"

namespace met {
namespace {

BlockKey key(uint64_t n) { return BlockKey{.lo = n, .hi = ~n}; }

// Allocates every free block of `pool`, in the order it hands them out.
std::vector<BlockId> allocate_all(BlockPool& pool) {
  std::vector<BlockId> blocks;
  while (const std::optional<BlockId> b = pool.allocate()) blocks.push_back(*b);
  return blocks;
}

TEST(BlockPool, StartsWithEveryBlockFree) {
  BlockPool pool(5);
  EXPECT_EQ(pool.num_blocks(), 5);
  EXPECT_EQ(pool.num_free(), 5);
  EXPECT_EQ(pool.num_evictable(), 0);
  EXPECT_EQ(pool.num_in_use(), 0);
}

TEST(BlockPool, AllocatesEveryBlockOnceThenNothing) {
  BlockPool pool(4);
  std::vector<BlockId> blocks = allocate_all(pool);
  ASSERT_EQ(blocks.size(), 4u);
  std::sort(blocks.begin(), blocks.end());
  EXPECT_EQ(std::adjacent_find(blocks.begin(), blocks.end()), blocks.end());
  EXPECT_EQ(pool.allocate(), std::nullopt);
  EXPECT_EQ(pool.num_free(), 0);
  EXPECT_EQ(pool.num_in_use(), 4);
}

TEST(BlockPool, AllocatedBlockHasOneReferenceAndNoKey) {
  BlockPool pool(2);
  const BlockId b = *pool.allocate();
  EXPECT_EQ(pool.ref_count(b), 1);
  EXPECT_EQ(pool.key_of(b), std::nullopt);
}

TEST(BlockPool, ReleaseOfAnUnkeyedBlockMakesItFree) {
  BlockPool pool(1);
  const BlockId b = *pool.allocate();
  pool.release(b);
  EXPECT_EQ(pool.ref_count(b), 0);
  EXPECT_EQ(pool.num_free(), 1);
  EXPECT_EQ(pool.num_evictable(), 0);
  EXPECT_EQ(pool.allocate(), b);
}

TEST(BlockPool, BlockStaysInUseUntilItsLastReferenceIsReleased) {
  BlockPool pool(1);
  const BlockId b = *pool.allocate();
  pool.retain(b);
  EXPECT_EQ(pool.ref_count(b), 2);
  pool.release(b);
  EXPECT_EQ(pool.ref_count(b), 1);
  EXPECT_EQ(pool.num_in_use(), 1);
  pool.release(b);
  EXPECT_EQ(pool.num_in_use(), 0);
}

TEST(BlockPool, ReleasedKeyedBlockBecomesEvictableAndStaysFindable) {
  BlockPool pool(3);
  const BlockId b = *pool.allocate();
  ASSERT_TRUE(pool.set_key(b, key(1)));
  pool.release(b);
  EXPECT_EQ(pool.num_evictable(), 1);
  EXPECT_EQ(pool.num_free(), 3);
  EXPECT_EQ(pool.num_in_use(), 0);
  EXPECT_EQ(pool.find(key(1)), b);
  EXPECT_EQ(pool.key_of(b), key(1));
}

TEST(BlockPool, EvictableBlocksAreReusedOnlyAfterFreeBlocksRunOut) {
  BlockPool pool(3);
  const BlockId cached = *pool.allocate();
  ASSERT_TRUE(pool.set_key(cached, key(1)));
  pool.release(cached);
  const BlockId a = *pool.allocate();
  const BlockId b = *pool.allocate();
  EXPECT_NE(a, cached);
  EXPECT_NE(b, cached);
  EXPECT_EQ(pool.find(key(1)), cached);
  EXPECT_EQ(pool.allocate(), cached);
}

TEST(BlockPool, EvictionTakesTheLeastRecentlyReleasedBlockFirst) {
  BlockPool pool(3);
  const std::vector<BlockId> blocks = allocate_all(pool);
  for (size_t i = 0; i < blocks.size(); ++i) ASSERT_TRUE(pool.set_key(blocks[i], key(i)));
  pool.release(blocks[1]);
  pool.release(blocks[2]);
  pool.release(blocks[0]);
  EXPECT_EQ(pool.allocate(), blocks[1]);
  EXPECT_EQ(pool.allocate(), blocks[2]);
  EXPECT_EQ(pool.allocate(), blocks[0]);
}

TEST(BlockPool, EvictionDropsTheKeyFromTheIndex) {
  BlockPool pool(1);
  const BlockId b = *pool.allocate();
  ASSERT_TRUE(pool.set_key(b, key(7)));
  pool.release(b);
  ASSERT_EQ(pool.allocate(), b);
  EXPECT_EQ(pool.find(key(7)), std::nullopt);
  EXPECT_EQ(pool.key_of(b), std::nullopt);
  EXPECT_EQ(pool.num_evictable(), 0);
  EXPECT_TRUE(pool.set_key(b, key(8)));  // the evicted block can take a new key
}

TEST(BlockPool, RetainRevivesAnEvictableBlock) {
  BlockPool pool(2);
  const BlockId b = *pool.allocate();
  ASSERT_TRUE(pool.set_key(b, key(1)));
  pool.release(b);
  pool.retain(b);
  EXPECT_EQ(pool.ref_count(b), 1);
  EXPECT_EQ(pool.num_evictable(), 0);
  EXPECT_EQ(pool.num_in_use(), 1);
  EXPECT_EQ(pool.key_of(b), key(1));
  EXPECT_NE(pool.allocate(), b);
  EXPECT_EQ(pool.allocate(), std::nullopt);  // the revived block is not evicted
}

TEST(BlockPool, RevivedBlockReleasedAgainGoesToTheMostRecentlyUsedEnd) {
  BlockPool pool(2);
  const std::vector<BlockId> blocks = allocate_all(pool);
  ASSERT_TRUE(pool.set_key(blocks[0], key(0)));
  ASSERT_TRUE(pool.set_key(blocks[1], key(1)));
  pool.release(blocks[0]);
  pool.release(blocks[1]);
  pool.retain(blocks[0]);
  pool.release(blocks[0]);
  EXPECT_EQ(pool.allocate(), blocks[1]);
  EXPECT_EQ(pool.allocate(), blocks[0]);
}

TEST(BlockPool, AllocateNIsAllOrNothing) {
  BlockPool pool(4);
  std::vector<BlockId> out = {BlockId(99)};
  EXPECT_FALSE(pool.allocate_n(5, out));
  EXPECT_EQ(out, std::vector<BlockId>{BlockId(99)});
  EXPECT_EQ(pool.num_free(), 4);
  EXPECT_TRUE(pool.allocate_n(3, out));
  EXPECT_EQ(out.size(), 4u);
  EXPECT_EQ(pool.num_free(), 1);
  EXPECT_FALSE(pool.allocate_n(2, out));
  EXPECT_EQ(out.size(), 4u);
  EXPECT_TRUE(pool.allocate_n(0, out));
  EXPECT_EQ(out.size(), 4u);
}

TEST(BlockPool, AllocateNCountsEvictableBlocksAsFree) {
  BlockPool pool(2);
  const std::vector<BlockId> blocks = allocate_all(pool);
  ASSERT_TRUE(pool.set_key(blocks[0], key(0)));
  pool.release_all(blocks);
  std::vector<BlockId> out;
  EXPECT_TRUE(pool.allocate_n(2, out));
  EXPECT_EQ(pool.find(key(0)), std::nullopt);
}

TEST(BlockPool, SetKeyFirstRegistrationWins) {
  BlockPool pool(2);
  const BlockId first = *pool.allocate();
  const BlockId second = *pool.allocate();
  EXPECT_TRUE(pool.set_key(first, key(5)));
  EXPECT_FALSE(pool.set_key(second, key(5)));
  EXPECT_EQ(pool.find(key(5)), first);
  EXPECT_EQ(pool.key_of(second), std::nullopt);
  pool.release(second);
  EXPECT_EQ(pool.num_evictable(), 0);  // the loser was never keyed, so it is free
}

TEST(BlockPool, SetKeyRefusesASecondKeyForTheSameBlock) {
  BlockPool pool(1);
  const BlockId b = *pool.allocate();
  EXPECT_TRUE(pool.set_key(b, key(1)));
  EXPECT_FALSE(pool.set_key(b, key(2)));
  EXPECT_FALSE(pool.set_key(b, key(1)));
  EXPECT_EQ(pool.key_of(b), key(1));
  EXPECT_EQ(pool.find(key(2)), std::nullopt);
}

TEST(BlockPool, ReleaseAllDropsOneReferenceFromEach) {
  BlockPool pool(3);
  const std::vector<BlockId> blocks = allocate_all(pool);
  pool.retain(blocks[1]);
  pool.release_all(blocks);
  EXPECT_EQ(pool.ref_count(blocks[0]), 0);
  EXPECT_EQ(pool.ref_count(blocks[1]), 1);
  EXPECT_EQ(pool.ref_count(blocks[2]), 0);
  EXPECT_EQ(pool.num_free(), 2);
}

// The CPU KV pool streams a head's rows block after block (kv_cache.h): a
// table given back comes out again in its own order, not reversed.
TEST(BlockPool, ReleaseAllHandsATablesBlocksOutAgainInItsOrder) {
  BlockPool pool(8);
  std::vector<BlockId> table;
  ASSERT_TRUE(pool.allocate_n(5, table));
  const std::vector<BlockId> mixed = {table[3], table[0], table[4], table[1], table[2]};
  pool.release_all(mixed);
  std::vector<BlockId> again;
  ASSERT_TRUE(pool.allocate_n(5, again));
  EXPECT_EQ(again, mixed);
}

// Of a cached prefix given back, the tail is evicted first: the head is
// what every longer match of it needs.
TEST(BlockPool, ReleaseAllOfKeyedBlocksMakesTheTailEvictableFirst) {
  BlockPool pool(3);
  const std::vector<BlockId> blocks = allocate_all(pool);
  for (size_t i = 0; i < blocks.size(); ++i) ASSERT_TRUE(pool.set_key(blocks[i], key(i)));
  pool.release_all(blocks);
  EXPECT_EQ(pool.allocate(), blocks[2]);
  EXPECT_EQ(pool.allocate(), blocks[1]);
  EXPECT_TRUE(pool.find(key(0)).has_value());
}

TEST(BlockPool, FindOfAnUnknownKeyIsNullopt) {
  BlockPool pool(2);
  EXPECT_EQ(pool.find(key(3)), std::nullopt);
}

// A slow, obviously right model of the pool: a std::list for the LRU and a
// linear scan for free blocks.
struct ReferencePool {
  explicit ReferencePool(int32_t n) : refs(static_cast<size_t>(n)), keys(static_cast<size_t>(n)) {}
  std::vector<int32_t> refs;
  std::vector<std::optional<BlockKey>> keys;
  std::list<int32_t> lru;  // front: least recently released
  std::unordered_map<BlockKey, int32_t, BlockKeyHash> index;

  bool is_free(int32_t b) const { return refs[b] == 0 && !keys[b]; }
  bool has_free() const {
    for (size_t b = 0; b < refs.size(); ++b) {
      if (is_free(static_cast<int32_t>(b))) return true;
    }
    return false;
  }
  void release(int32_t b) {
    if (--refs[b] == 0 && keys[b]) lru.push_back(b);
  }
  void retain(int32_t b) {
    if (refs[b] == 0) lru.remove(b);
    ++refs[b];
  }
};

TEST(BlockPool, MatchesASimpleReferenceUnderRandomOperations) {
  constexpr int32_t kBlocks = 8;
  BlockPool pool(kBlocks);
  ReferencePool ref(kBlocks);
  std::vector<BlockId> held;  // one entry per reference the test holds
  std::mt19937 rng(12345);
  const auto pick = [&rng](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  for (int step = 0; step < 20000; ++step) {
    const int op = static_cast<int>(pick(5));
    if (op == 0) {  // allocate
      const std::optional<BlockId> got = pool.allocate();
      if (ref.has_free()) {
        ASSERT_TRUE(got.has_value());
        ASSERT_TRUE(ref.is_free(got->value())) << "step " << step;
      } else if (!ref.lru.empty()) {
        ASSERT_EQ(got, BlockId(ref.lru.front())) << "step " << step;
        ref.lru.pop_front();
        ref.index.erase(*ref.keys[got->value()]);
        ref.keys[got->value()].reset();
      } else {
        ASSERT_EQ(got, std::nullopt) << "step " << step;
        continue;
      }
      ref.refs[got->value()] = 1;
      held.push_back(*got);
    } else if (op == 1 && !held.empty()) {  // release
      const size_t i = pick(held.size());
      const BlockId b = held[i];
      held[i] = held.back();
      held.pop_back();
      pool.release(b);
      ref.release(b.value());
    } else if (op == 2 && !held.empty()) {  // retain a held block
      const BlockId b = held[pick(held.size())];
      pool.retain(b);
      ref.retain(b.value());
      held.push_back(b);
    } else if (op == 3) {  // a cache hit: find, then retain
      const BlockKey k = key(pick(2 * kBlocks));
      const std::optional<BlockId> found = pool.find(k);
      const auto it = ref.index.find(k);
      ASSERT_EQ(found.has_value(), it != ref.index.end()) << "step " << step;
      if (!found) continue;
      ASSERT_EQ(found->value(), it->second);
      pool.retain(*found);
      ref.retain(found->value());
      held.push_back(*found);
    } else if (op == 4 && !held.empty()) {  // set_key
      const BlockId b = held[pick(held.size())];
      const BlockKey k = key(pick(2 * kBlocks));
      const bool expected = !ref.keys[b.value()] && !ref.index.contains(k);
      ASSERT_EQ(pool.set_key(b, k), expected) << "step " << step;
      if (expected) {
        ref.keys[b.value()] = k;
        ref.index.emplace(k, b.value());
      }
    }
    int32_t free = 0;
    for (int32_t b = 0; b < kBlocks; ++b) {
      ASSERT_EQ(pool.ref_count(BlockId(b)), ref.refs[b]) << "block " << b << " at step " << step;
      ASSERT_EQ(pool.key_of(BlockId(b)), ref.keys[b]) << "block " << b << " at step " << step;
      free += ref.refs[b] == 0 ? 1 : 0;
    }
    ASSERT_EQ(pool.num_free(), free);
    ASSERT_EQ(pool.num_evictable(), static_cast<int32_t>(ref.lru.size()));
    ASSERT_EQ(pool.num_in_use(), kBlocks - free);
  }
}

TEST(BlockPool, DoesNotAllocateAfterConstruction) {
  BlockPool pool(64);
  std::vector<BlockId> held;
  held.reserve(64);
  const int64_t before = testing::num_allocations();
  uint64_t next_key = 0;
  for (int round = 0; round < 10; ++round) {
    ASSERT_TRUE(pool.allocate_n(64, held));  // evicts last round's keyed blocks
    for (const BlockId b : held) ASSERT_TRUE(pool.set_key(b, key(next_key++)));
    (void)pool.find(key(next_key - 1));
    pool.release_all(held);
    held.clear();
  }
  EXPECT_EQ(testing::num_allocations() - before, 0);
}

TEST(BlockPoolDeathTest, AnIdOutsideThePoolNamesTheBlock) {
  BlockPool pool(4);
  EXPECT_DEATH(pool.retain(BlockId(4)), "block 4 is not in the pool of 4 blocks");
  EXPECT_DEATH(pool.release(BlockId(-1)), "block -1 is not in the pool of 4 blocks");
}

TEST(BlockPoolDeathTest, DoubleReleaseNamesTheBlock) {
  BlockPool pool(4);
  const BlockId b = *pool.allocate();
  pool.release(b);
  EXPECT_DEATH(pool.release(b), "release of block 0, which holds no reference");
}

TEST(BlockPoolDeathTest, ReleaseOfAnEvictableBlockNamesTheBlock) {
  BlockPool pool(4);
  const BlockId b = *pool.allocate();
  ASSERT_TRUE(pool.set_key(b, key(1)));
  pool.release(b);
  EXPECT_DEATH(pool.release(b), "release of block 0, which holds no reference");
}

TEST(BlockPoolDeathTest, RetainOfAFreeBlockNamesTheBlock) {
  BlockPool pool(4);
  EXPECT_DEATH(pool.retain(BlockId(2)), "retain of block 2, which is free");
}

TEST(BlockPoolDeathTest, SetKeyOnABlockNotInUseNamesTheBlock) {
  BlockPool pool(4);
  EXPECT_DEATH((void)pool.set_key(BlockId(3), key(1)), "set_key on block 3, which is not in use");
}

}  // namespace
}  // namespace met
