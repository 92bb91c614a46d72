// Tests for engine/kv_event_stager.h: the prefix cache's reports become
// KvEvents named by their external hashes, taken once as a batch.
#include "engine/kv_event_stager.h"

#include <gtest/gtest.h>

#include <numeric>
#include <variant>
#include <vector>

namespace met {
namespace {

TEST(KvEventStager, TakesNothingWhenNothingWasReported) {
  KvEventStager s;
  KvEventBatch b;
  EXPECT_FALSE(s.take(b));
  EXPECT_TRUE(b.events.empty());
}

TEST(KvEventStager, TurnsReportsIntoEventsInOrderAndLeavesNothingStaged) {
  KvEventStager s;
  std::vector<TokenId> tokens(kKvBlockTokens);
  std::iota(tokens.begin(), tokens.end(), 40);
  const BlockKey parent{.lo = 11, .hi = 12};
  const BlockKey key{.lo = 21, .hi = 22};
  s.all_blocks_cleared();
  s.block_stored(parent, std::nullopt, tokens, 0);
  s.block_stored(key, parent, tokens, 5);
  s.block_removed(parent);
  KvEventBatch b;
  ASSERT_TRUE(s.take(b));
  EXPECT_GT(b.ts, 1.6e9);  // seconds since the epoch
  ASSERT_EQ(b.events.size(), 4u);
  EXPECT_TRUE(std::holds_alternative<KvAllBlocksCleared>(b.events[0]));
  const auto& first = std::get<KvBlockStored>(b.events[1]);
  EXPECT_EQ(first.block_hash, external_block_hash(parent));
  EXPECT_FALSE(first.parent_hash.has_value());
  EXPECT_FALSE(first.lora_id.has_value());  // the base model
  EXPECT_EQ(first.token_ids[0], 40);
  EXPECT_EQ(first.token_ids[kKvBlockTokens - 1], 40 + kKvBlockTokens - 1);
  const auto& second = std::get<KvBlockStored>(b.events[2]);
  EXPECT_EQ(second.block_hash, external_block_hash(key));
  EXPECT_EQ(second.parent_hash, external_block_hash(parent));
  EXPECT_EQ(second.lora_id, 5u);
  EXPECT_EQ(std::get<KvBlockRemoved>(b.events[3]).block_hash, external_block_hash(parent));
  EXPECT_TRUE(s.empty());
  EXPECT_FALSE(s.take(b));
}

}  // namespace
}  // namespace met
