// Tests for kv/kv_manager.h over a FakeDevice (which holds the block bytes),
// blocks released behind a sliding window included, and state snapshots
// that leave with the blocks they belong to.
#include "kv/kv_manager.h"

#include <gtest/gtest.h>

#include "testing/fake_device.h"
#include "testing/random_data.h"

namespace met {
namespace {

testing::FakeDeviceOptions small_pool(int32_t blocks) {
  testing::FakeDeviceOptions o;
  o.num_kv_blocks = blocks;
  return o;
}

// A sequence of `n` prompt tokens (seed `seed`) whose KV is computed: its
// blocks reserved and seq_len at the end.
SeqState computed(KvManager& kv, int n, uint32_t seed) {
  SeqState s;
  s.tokens = testing::make_prompt(n, seed);
  EXPECT_EQ(kv.reserve(s, n), Admit::kNow);
  s.seq_len = n;
  return s;
}

TEST(KvManager, ReserveKvGrowsTheTableOrSaysLaterOrNever) {
  testing::FakeDevice device(small_pool(4));
  KvManager kv(device);
  SeqState a;
  EXPECT_EQ(kv.reserve(a, 17), Admit::kNow);
  EXPECT_EQ(a.block_table.size(), 2u);
  EXPECT_EQ(kv.reserve(a, 20), Admit::kNow);
  EXPECT_EQ(a.block_table.size(), 2u);
  SeqState b;
  EXPECT_EQ(kv.reserve(b, 48), Admit::kLater);
  EXPECT_TRUE(b.block_table.empty());  // nothing taken on kLater
  EXPECT_EQ(kv.reserve(b, 65), Admit::kNever);
  kv.apply(ReleaseSeq{&a, false, "test"});
  EXPECT_EQ(kv.num_blocks_in_use(), 0);
}

TEST(KvManager, ReleaseWithCacheRegistersOnlyFullComputedBlocks) {
  testing::FakeDevice device(small_pool(8));
  KvManager kv(device);
  SeqState a;
  a.tokens = testing::make_prompt(40, 1);
  ASSERT_EQ(kv.reserve(a, 40), Admit::kNow);
  a.seq_len = 40;
  kv.apply(ReleaseSeq{&a, /*cache=*/true, "test"});
  EXPECT_TRUE(a.block_table.empty());
  EXPECT_EQ(a.seq_len, 0);
  EXPECT_EQ(kv.num_blocks_in_use(), 0);
  EXPECT_EQ(kv.num_free_blocks(), 8);  // evictable counts as free
  SeqState b;
  b.tokens = testing::make_prompt(40, 1);
  EXPECT_EQ(kv.match_prefix(b).num_tokens, 32);
  EXPECT_EQ(b.seq_len, 32);
  kv.apply(ReleaseSeq{&b, false, "test"});
}

TEST(KvManager, AMatchAlwaysLeavesOneTokenToCompute) {
  testing::FakeDevice device(small_pool(8));
  KvManager kv(device);
  SeqState a;
  a.tokens = testing::make_prompt(32, 2);
  ASSERT_EQ(kv.reserve(a, 32), Admit::kNow);
  a.seq_len = 32;
  kv.apply(ReleaseSeq{&a, true, "test"});
  SeqState b;
  b.tokens = testing::make_prompt(32, 2);  // exactly two full blocks
  EXPECT_EQ(kv.match_prefix(b).num_tokens, 16);
  kv.apply(ReleaseSeq{&b, false, "test"});
}

TEST(KvManager, FindingAPrefixTakesNothingAndAdoptingItTakesExactlyThatChain) {
  testing::FakeDevice device(small_pool(8));
  KvManager kv(device);
  SeqState a = computed(kv, 40, 3);
  kv.apply(ReleaseSeq{&a, /*cache=*/true, "test"});
  EXPECT_EQ(kv.num_unkeyed_free_blocks(), 6);  // 2 hold the cached prefix

  SeqState b;
  b.tokens = testing::make_prompt(40, 3);
  std::vector<BlockId> hit;
  EXPECT_EQ(kv.find_prefix(b, hit).num_tokens, 32);
  ASSERT_EQ(hit.size(), 2u);
  EXPECT_TRUE(kv.is_idle(hit[0]));
  EXPECT_TRUE(b.block_table.empty());
  EXPECT_EQ(b.seq_len, 0);
  EXPECT_EQ(kv.num_blocks_in_use(), 0);
  EXPECT_EQ(kv.prefix_cache().num_queries(), 0);  // a look is not a query

  EXPECT_EQ(kv.adopt_prefix(b, hit).num_tokens, 32);
  EXPECT_EQ(b.block_table, hit);
  EXPECT_EQ(b.seq_len, 32);
  EXPECT_EQ(kv.num_blocks_in_use(), 2);
  EXPECT_FALSE(kv.is_idle(hit[0]));
  EXPECT_EQ(kv.prefix_cache().num_queries(), 1);
  EXPECT_EQ(kv.prefix_cache().num_hit_tokens(), 32);
  kv.apply(ReleaseSeq{&b, false, "test"});
  EXPECT_EQ(kv.num_blocks_in_use(), 0);
}

TEST(KvManager, SoleBlocksAreTheOnesNoOtherSequenceHolds) {
  testing::FakeDevice device(small_pool(8));
  KvManager kv(device);
  SeqState a = computed(kv, 40, 4);
  kv.apply(PublishPrefix{&a});
  EXPECT_EQ(kv.num_sole_blocks(a), 3);
  SeqState b;
  b.tokens = testing::make_prompt(40, 4);
  EXPECT_EQ(kv.match_prefix(b).num_blocks, 2);
  EXPECT_EQ(kv.num_sole_blocks(a), 1);  // the two prefix blocks are shared now
  EXPECT_EQ(kv.num_sole_blocks(b), 0);
  kv.apply(ReleaseSeq{&a, false, "test"});
  EXPECT_EQ(kv.num_sole_blocks(b), 2);
  kv.apply(ReleaseSeq{&b, false, "test"});
}

TEST(KvManager, CompactAndDetachSlotUpdateTheSequence) {
  testing::FakeDevice device(small_pool(2));
  KvManager kv(device);
  SeqState a;
  a.slot_idx = 3;
  kv.apply(CompactSlot{&a, 1});
  EXPECT_EQ(a.slot_idx, 1);
  kv.apply(DetachSlot{&a});
  EXPECT_FALSE(a.owns_slot);
}

TEST(KvManager, SaveAndRestoreBlocksRoundTripTheKv) {
  testing::FakeDevice device(small_pool(8));
  KvManager kv(device);
  SeqState a;
  ASSERT_EQ(kv.reserve(a, 32), Admit::kNow);
  std::vector<uint8_t> pattern(static_cast<size_t>(device.info().kv_block_bytes));
  for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<uint8_t>(i * 7);
  ASSERT_TRUE(device.write_kv_block(a.block_table[1], pattern).ok());
  SpillImage image;
  ASSERT_TRUE(kv.save_blocks(a, 2, image).ok());
  EXPECT_EQ(image.num_blocks, 2);
  EXPECT_EQ(image.shape, kv.kv_shape());
  kv.apply(ReleaseSeq{&a, false, "test"});
  SeqState b;
  ASSERT_TRUE(kv.restore_blocks(b, image, 0, 0).ok());
  std::vector<uint8_t> back(pattern.size());
  ASSERT_TRUE(device.read_kv_block(b.block_table[1], back).ok());
  EXPECT_EQ(back, pattern);
  kv.apply(ReleaseSeq{&b, false, "test"});
}

testing::FakeDeviceOptions recurrent_pool(int32_t blocks, int32_t slots) {
  testing::FakeDeviceOptions o = small_pool(blocks);
  o.num_state_slots = slots;
  return o;
}

TEST(KvManager, ARecurrentSequenceHoldsOneStateSlotUntilItsRelease) {
  testing::FakeDevice device(recurrent_pool(8, 2));
  KvManager kv(device);
  EXPECT_EQ(kv.num_state_slots(), 2);
  SeqState a, b, c;
  ASSERT_TRUE(kv.acquire_state_slot(a));
  ASSERT_TRUE(kv.acquire_state_slot(a));  // it keeps the one it has
  ASSERT_TRUE(kv.acquire_state_slot(b));
  EXPECT_NE(a.state_slot, b.state_slot);
  EXPECT_FALSE(kv.acquire_state_slot(c));
  EXPECT_FALSE(c.state_slot.has_value());
  EXPECT_EQ(kv.num_state_slots_in_use(), 2);
  kv.apply(ReleaseSeq{&a, false, "test"});
  EXPECT_FALSE(a.state_slot.has_value());
  EXPECT_TRUE(kv.acquire_state_slot(c));
  kv.apply(ReleaseSeq{&b, false, "test"});
  kv.apply(ReleaseSeq{&c, false, "test"});
  EXPECT_EQ(kv.num_state_slots_in_use(), 0);
}

TEST(KvManager, AModelWithoutRecurrentStateNeedsNoSlot) {
  testing::FakeDevice device(small_pool(8));
  KvManager kv(device);
  SeqState a;
  EXPECT_TRUE(kv.acquire_state_slot(a));
  EXPECT_FALSE(a.state_slot.has_value());
  EXPECT_EQ(kv.kv_shape().state_bytes, 0);
}

TEST(KvManager, ASwapImageCarriesTheStateSlotAndARestoreTakesANewOne) {
  testing::FakeDevice device(recurrent_pool(8, 2));
  KvManager kv(device);
  SeqState a;
  ASSERT_EQ(kv.reserve(a, 20), Admit::kNow);
  ASSERT_TRUE(kv.acquire_state_slot(a));
  std::vector<uint8_t> state(static_cast<size_t>(device.info().state_slot_bytes));
  for (size_t i = 0; i < state.size(); ++i) state[i] = static_cast<uint8_t>(i * 11 + 3);
  ASSERT_TRUE(device.write_state_slot(*a.state_slot, 0, state).ok());
  SpillImage image;
  ASSERT_TRUE(kv.save_blocks(a, 2, image).ok());
  EXPECT_EQ(image.shape.state_bytes, device.info().state_slot_bytes);
  EXPECT_EQ(static_cast<int64_t>(image.bytes.size()), 2 * image.shape.block_bytes + image.shape.state_bytes);
  kv.apply(ReleaseSeq{&a, false, "test"});
  SeqState other;
  ASSERT_TRUE(kv.acquire_state_slot(other));  // a's old slot, most likely
  std::vector<uint8_t> zero(state.size(), 0);
  ASSERT_TRUE(device.write_state_slot(*other.state_slot, 0, zero).ok());
  SeqState b;
  ASSERT_TRUE(kv.restore_blocks(b, image, 0, 0).ok());
  ASSERT_TRUE(b.state_slot.has_value());
  std::vector<uint8_t> back(state.size());
  ASSERT_TRUE(device.read_state_slot(*b.state_slot, 0, back).ok());
  EXPECT_EQ(back, state);
  kv.apply(ReleaseSeq{&b, false, "test"});
  kv.apply(ReleaseSeq{&other, false, "test"});
  EXPECT_EQ(kv.num_state_slots_in_use(), 0);
  EXPECT_EQ(kv.num_blocks_in_use(), 0);
}

TEST(KvManager, ARestoreWhoseStateCannotBeWrittenTakesNothing) {
  testing::FakeDevice device(recurrent_pool(8, 2));
  KvManager kv(device);
  SeqState a;
  ASSERT_EQ(kv.reserve(a, 20), Admit::kNow);
  ASSERT_TRUE(kv.acquire_state_slot(a));
  SpillImage image;
  ASSERT_TRUE(kv.save_blocks(a, 2, image).ok());
  kv.apply(ReleaseSeq{&a, false, "test"});
  device.fail_every(testing::DeviceCall::kWriteState);
  SeqState b;
  EXPECT_FALSE(kv.restore_blocks(b, image, 0, 0).ok());
  EXPECT_TRUE(b.block_table.empty());
  EXPECT_FALSE(b.state_slot.has_value());
  EXPECT_EQ(kv.num_blocks_in_use(), 0);
  EXPECT_EQ(kv.num_state_slots_in_use(), 0);
}

TEST(KvManager, ARecurrentModelReusesNoCachedPrefix) {
  testing::FakeDevice device(recurrent_pool(8, 2));
  KvManager kv(device);
  SeqState a = computed(kv, 40, 5);
  kv.apply(ReleaseSeq{&a, true, "test"});
  SeqState b;
  b.tokens = testing::make_prompt(40, 5);
  std::vector<BlockId> found;
  EXPECT_EQ(kv.find_prefix(b, found).num_tokens, 0);
  EXPECT_EQ(kv.match_prefix(b).num_tokens, 0);
  EXPECT_TRUE(b.block_table.empty());
}

TEST(KvManager, ARestoreThatCannotGetItsBlocksTakesNothing) {
  testing::FakeDevice device(small_pool(2));
  KvManager kv(device);
  SpillImage image;
  image.shape = kv.kv_shape();
  image.num_blocks = 3;
  image.bytes.resize(static_cast<size_t>(3 * image.shape.block_bytes));
  SeqState a;
  Status s = kv.restore_blocks(a, image, 0, 0);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(a.block_table.empty());
  EXPECT_EQ(kv.num_blocks_in_use(), 0);
}

// Five computed blocks (80 tokens); the first three are behind the window.
TEST(KvManager, ReleaseBehindWindowGivesBackTheLeadingBlocksAndMarksTheirEntries) {
  testing::FakeDevice device(small_pool(8));
  KvManager kv(device);
  SeqState a = computed(kv, 80, 5);
  const BlockId fourth = a.block_table[3];
  kv.apply(ReleaseBehindWindow{&a, 3});
  ASSERT_EQ(a.block_table.size(), 5u);
  for (int b = 0; b < 3; ++b) EXPECT_EQ(a.block_table[static_cast<size_t>(b)], kReleasedBlock);
  EXPECT_EQ(a.block_table[3], fourth);
  EXPECT_EQ(a.num_released_blocks, 3);
  EXPECT_EQ(kv.num_blocks_in_use(), 2);
  EXPECT_EQ(kv.num_free_blocks(), 6);
  EXPECT_EQ(kv.num_sole_blocks(a), 2);
  kv.apply(ReleaseBehindWindow{&a, 2});  // already behind: nothing changes
  kv.apply(ReleaseBehindWindow{&a, 3});
  EXPECT_EQ(a.num_released_blocks, 3);
  EXPECT_EQ(kv.num_blocks_in_use(), 2);
  kv.apply(Rollback{&a});  // keeps the computed blocks, released or not
  EXPECT_EQ(a.block_table.size(), 5u);
  kv.apply(ReleaseSeq{&a, /*cache=*/false, "test"});
  EXPECT_TRUE(a.block_table.empty());
  EXPECT_EQ(a.num_released_blocks, 0);
  EXPECT_EQ(kv.num_blocks_in_use(), 0);
}

TEST(KvManager, ATableWithReleasedBlocksPublishesNothingSoNoMatchReachesThem) {
  testing::FakeDevice device(small_pool(8));
  KvManager kv(device);
  SeqState a = computed(kv, 80, 6);
  kv.apply(ReleaseBehindWindow{&a, 1});
  kv.apply(PublishPrefix{&a});
  kv.apply(ReleaseSeq{&a, /*cache=*/true, "test"});
  EXPECT_EQ(kv.num_blocks_in_use(), 0);
  SeqState b;
  b.tokens = testing::make_prompt(80, 6);
  EXPECT_EQ(kv.match_prefix(b).num_blocks, 0);
  kv.apply(ReleaseSeq{&b, false, "test"});
}

TEST(KvManager, BlocksPublishedBeforeTheirReleaseStayFindable) {
  testing::FakeDevice device(small_pool(8));
  KvManager kv(device);
  SeqState a = computed(kv, 40, 7);
  kv.apply(PublishPrefix{&a});  // a prefill chunk's blocks are shared at once
  kv.apply(ReleaseBehindWindow{&a, 2});
  EXPECT_EQ(kv.num_blocks_in_use(), 1);
  SeqState b;
  b.tokens = testing::make_prompt(40, 7);
  const PrefixMatch m = kv.match_prefix(b);
  EXPECT_EQ(m.num_blocks, 2);
  for (BlockId id : b.block_table) EXPECT_NE(id, kReleasedBlock);
  kv.apply(ReleaseSeq{&a, false, "test"});
  kv.apply(ReleaseSeq{&b, false, "test"});
  EXPECT_EQ(kv.num_blocks_in_use(), 0);
}

// A pool of 4 blocks serves a table of any length whose live part fits.
TEST(KvManager, ReserveCountsOnlyLiveBlocksAgainstThePool) {
  testing::FakeDevice device(small_pool(4));
  KvManager kv(device);
  SeqState a = computed(kv, 64, 8);
  EXPECT_EQ(kv.reserve(a, 65), Admit::kNever);  // five blocks of a pool of four
  kv.apply(ReleaseBehindWindow{&a, 3});
  EXPECT_EQ(kv.reserve(a, 65 + 2 * kKvBlockTokens), Admit::kNow);  // 7 entries, 4 live
  EXPECT_EQ(a.block_table.size(), 7u);
  EXPECT_EQ(kv.reserve(a, 65 + 3 * kKvBlockTokens), Admit::kNever);  // 5 live
  kv.apply(ReleaseSeq{&a, false, "test"});
  EXPECT_EQ(kv.num_blocks_in_use(), 0);
}

TEST(KvManager, SavingLeavesReleasedBlocksOutAndRestoringBringsThemBackReleased) {
  testing::FakeDevice device(small_pool(8));
  KvManager kv(device);
  SeqState a = computed(kv, 80, 9);
  std::vector<uint8_t> pattern(static_cast<size_t>(device.info().kv_block_bytes));
  for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<uint8_t>(i * 5 + 1);
  ASSERT_TRUE(device.write_kv_block(a.block_table[3], pattern).ok());
  kv.apply(ReleaseBehindWindow{&a, 2});
  SpillImage image;
  ASSERT_TRUE(kv.save_blocks(a, 5, image).ok());
  EXPECT_EQ(image.num_blocks, 3);
  kv.apply(ReleaseSeq{&a, false, "test"});
  SeqState b;
  ASSERT_TRUE(kv.restore_blocks(b, image, 2, 80).ok());
  EXPECT_EQ(b.seq_len, 80);
  ASSERT_EQ(b.block_table.size(), 5u);
  EXPECT_EQ(b.num_released_blocks, 2);
  EXPECT_EQ(b.block_table[0], kReleasedBlock);
  EXPECT_EQ(b.block_table[1], kReleasedBlock);
  EXPECT_EQ(kv.num_blocks_in_use(), 3);
  std::vector<uint8_t> back(pattern.size());
  ASSERT_TRUE(device.read_kv_block(b.block_table[3], back).ok());
  EXPECT_EQ(back, pattern);
  kv.apply(ReleaseSeq{&b, false, "test"});
  EXPECT_EQ(kv.num_blocks_in_use(), 0);
}

TEST(KvManager, ARestoreAfterReleasedBlocksThatFailsLeavesAnEmptyTable) {
  testing::FakeDevice device(small_pool(8));
  KvManager kv(device);
  SeqState a = computed(kv, 80, 10);
  kv.apply(ReleaseBehindWindow{&a, 2});
  SpillImage image;
  ASSERT_TRUE(kv.save_blocks(a, 5, image).ok());
  kv.apply(ReleaseSeq{&a, false, "test"});
  device.fail_every(testing::DeviceCall::kWriteKv);
  SeqState b;
  EXPECT_FALSE(kv.restore_blocks(b, image, 2, 0).ok());
  EXPECT_TRUE(b.block_table.empty());
  EXPECT_EQ(b.num_released_blocks, 0);
  EXPECT_EQ(kv.num_blocks_in_use(), 0);
  image.num_blocks = 9;  // more than the pool: nothing taken
  image.bytes.resize(static_cast<size_t>(9 * image.shape.block_bytes));
  EXPECT_FALSE(kv.restore_blocks(b, image, 2, 0).ok());
  EXPECT_TRUE(b.block_table.empty());
  EXPECT_EQ(b.num_released_blocks, 0);
  EXPECT_EQ(kv.num_blocks_in_use(), 0);
}

}  // namespace
}  // namespace met

namespace met {
namespace {

// Counts the keys the pool drops, as the engine's KV event stager would see them.
struct RemovalCounter final : KvEventSink {
  int removed = 0;
  void block_stored(const BlockKey&, const std::optional<BlockKey>&, std::span<const TokenId>, uint64_t) override {}
  void block_removed(const BlockKey&) override { ++removed; }
  void all_blocks_cleared() override {}
};

// A snapshot of a prefix whose last block is evicted for reuse is dropped
// with it (no chain can reach it), and the engine's observer still hears of
// the eviction.
TEST(KvManager, AStateSnapshotLeavesWithTheBlockItsPrefixEndsIn) {
  testing::FakeDeviceOptions o = recurrent_pool(4, 3);
  o.num_state_snapshot_slots = 2;
  testing::FakeDevice device(o);
  KvManager kv(device, /*snapshot_interval_blocks=*/2);
  RemovalCounter counter;
  kv.set_event_sink(&counter);
  SeqState a;
  a.id = SeqId(1);
  a.tokens = testing::make_prompt(40, 3);
  ASSERT_TRUE(kv.acquire_state_slot(a));
  ASSERT_EQ(kv.reserve(a, 40), Admit::kNow);
  kv.begin_step();
  ASSERT_TRUE(kv.prompt_snapshot_due(a, 32, 40).has_value());
  a.seq_len = 40;
  kv.apply(ReleaseSeq{&a, /*cache=*/true, "test"});
  EXPECT_EQ(kv.num_state_snapshots(), 1);
  SeqState probe;
  probe.tokens = a.tokens;
  EXPECT_EQ(kv.match_prefix(probe).num_tokens, 32) << "the snapshot at 32 makes the prefix reusable";
  kv.apply(ReleaseSeq{&probe, false, "test"});
  kv.begin_step();
  SeqState b;
  b.tokens = testing::make_prompt(64, 4);
  ASSERT_EQ(kv.reserve(b, 64), Admit::kNow);  // takes every block: a's cached ones are evicted
  EXPECT_EQ(counter.removed, 2);
  EXPECT_EQ(kv.num_state_snapshots(), 0);
  kv.apply(ReleaseSeq{&b, false, "test"});
}

}  // namespace
}  // namespace met
