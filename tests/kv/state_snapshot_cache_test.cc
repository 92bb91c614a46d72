// Tests for state_snapshot_cache.h: snapshots are found by their prefix's
// key, and the deepest on a chain by its depth; a new one takes a free slot
// and then the least recently used unpinned one of an earlier step; a
// pinned or pending one is never evicted; a key is cached once; a running
// sequence's rolling snapshot is rekeyed in place while it may be; a pending
// one is found only once fulfilled; an evicted block's snapshot is erased.
#include "kv/state_snapshot_cache.h"

#include <span>
#include <vector>

#include <gtest/gtest.h>

namespace met {
namespace {

BlockKey snap_key(uint64_t n) { return BlockKey{n, n * 31 + 7}; }

StateSnapshotCache three_slots() { return StateSnapshotCache({StateSlotId(10), StateSlotId(11), StateSlotId(12)}); }

TEST(StateSnapshotCache, ASnapshotIsFoundByItsKeyInTheSlotItWasGiven) {
  StateSnapshotCache c = three_slots();
  EXPECT_EQ(c.capacity(), 3);
  EXPECT_EQ(c.size(), 0);
  const std::optional<StateSlotId> s = c.insert(snap_key(1), 1);
  ASSERT_TRUE(s.has_value());
  EXPECT_GE(s->value(), 10);
  EXPECT_EQ(c.find(snap_key(1)), s);
  EXPECT_FALSE(c.find(snap_key(2)).has_value());
  EXPECT_EQ(c.size(), 1);
  EXPECT_FALSE(c.insert(snap_key(1), 1).has_value()) << "a key is cached once";
}

TEST(StateSnapshotCache, FreeSlotsFillFirstThenTheLeastRecentlyUsedIsEvicted) {
  StateSnapshotCache c = three_slots();
  const StateSlotId s1 = *c.insert(snap_key(1), 1);
  const StateSlotId s2 = *c.insert(snap_key(2), 2);
  const StateSlotId s3 = *c.insert(snap_key(3), 3);
  EXPECT_NE(s1, s2);
  EXPECT_NE(s2, s3);
  c.unpin(c.pin(snap_key(1)));  // 1 used after 2 and 3
  c.new_step();
  const std::optional<StateSlotId> s4 = c.insert(snap_key(4), 4);
  ASSERT_TRUE(s4.has_value());
  EXPECT_EQ(*s4, s2);
  EXPECT_FALSE(c.find(snap_key(2)).has_value());
  EXPECT_EQ(c.find(snap_key(1)), s1);
  EXPECT_EQ(c.find(snap_key(3)), s3);
}

TEST(StateSnapshotCache, APinnedSnapshotIsNeverEvicted) {
  StateSnapshotCache c({StateSlotId(5)});
  const StateSlotId s = *c.insert(snap_key(1), 1);
  EXPECT_EQ(c.pin(snap_key(1)), s);
  c.new_step();
  EXPECT_FALSE(c.insert(snap_key(2), 2).has_value());
  EXPECT_EQ(c.find(snap_key(1)), s);
  c.unpin(s);
  EXPECT_EQ(c.insert(snap_key(2), 2), s);
  EXPECT_FALSE(c.find(snap_key(1)).has_value());
}

TEST(StateSnapshotCache, AStepNeverEvictsASnapshotItWrites) {
  StateSnapshotCache c({StateSlotId(5), StateSlotId(6)});
  c.new_step();
  const StateSlotId a = *c.insert(snap_key(1), 1);
  const StateSlotId b = *c.insert(snap_key(2), 2);
  EXPECT_NE(a, b);
  EXPECT_FALSE(c.insert(snap_key(3), 3).has_value()) << "both slots are this step's";
  c.new_step();
  EXPECT_EQ(c.insert(snap_key(3), 3), a);  // the older of the two, now from an earlier step
}

TEST(StateSnapshotCache, WithoutSlotsNothingIsCached) {
  StateSnapshotCache c({});
  EXPECT_EQ(c.capacity(), 0);
  EXPECT_FALSE(c.insert(snap_key(1), 1).has_value());
  EXPECT_FALSE(c.find(snap_key(1)).has_value());
}

// chain[i] names a prompt's first i + 1 blocks; entries of other depths or
// other chains are not on it.
TEST(StateSnapshotCache, TheDeepestSnapshotOnAChainIsFoundByItsDepth) {
  StateSnapshotCache c = three_slots();
  const std::vector<BlockKey> chain = {snap_key(1), snap_key(2), snap_key(3), snap_key(4), snap_key(5)};
  EXPECT_EQ(c.deepest(chain), 0);
  ASSERT_TRUE(c.insert(snap_key(2), 2).has_value());
  ASSERT_TRUE(c.insert(snap_key(4), 4).has_value());
  ASSERT_TRUE(c.insert(snap_key(9), 5).has_value());  // depth 5 of another chain
  EXPECT_EQ(c.deepest(chain), 4);
  EXPECT_EQ(c.deepest(std::span(chain).first(3)), 2) << "a shorter chain reaches only depth 2";
  EXPECT_EQ(c.deepest(std::span(chain).first(1)), 0);
}

TEST(StateSnapshotCache, ARollingSnapshotIsRekeyedInPlaceInALaterStep) {
  StateSnapshotCache c = three_slots();
  const SeqId seq(7);
  const StateSlotId first = *c.insert_rolling(seq, snap_key(1), 1);
  c.new_step();
  const std::optional<StateSlotId> second = c.insert_rolling(seq, snap_key(2), 2);
  EXPECT_EQ(second, first) << "the sequence's own entry moves on";
  EXPECT_FALSE(c.find(snap_key(1)).has_value());
  EXPECT_EQ(c.find(snap_key(2)), first);
  EXPECT_EQ(c.size(), 1);
  // Another sequence's rolling snapshot takes another slot.
  EXPECT_NE(c.insert_rolling(SeqId(8), snap_key(3), 3), first);
}

TEST(StateSnapshotCache, APinnedRollingSnapshotStaysAndTheSequenceGetsANewOne) {
  StateSnapshotCache c = three_slots();
  const SeqId seq(7);
  const StateSlotId first = *c.insert_rolling(seq, snap_key(1), 1);
  c.pin(snap_key(1));  // a request admitted from it restores it later
  c.new_step();
  const std::optional<StateSlotId> second = c.insert_rolling(seq, snap_key(2), 2);
  ASSERT_TRUE(second.has_value());
  EXPECT_NE(*second, first);
  EXPECT_EQ(c.find(snap_key(1)), first);
  c.unpin(first);
  c.new_step();
  EXPECT_EQ(c.insert_rolling(seq, snap_key(3), 3), second) << "the new entry is the one it owns now";
  EXPECT_EQ(c.find(snap_key(1)), first) << "the old one is a plain snapshot";
}

TEST(StateSnapshotCache, AnEntryWrittenThisStepIsNotRekeyedInIt) {
  StateSnapshotCache c = three_slots();
  const SeqId seq(7);
  c.new_step();
  const StateSlotId first = *c.insert_rolling(seq, snap_key(1), 1);
  const std::optional<StateSlotId> second = c.insert_rolling(seq, snap_key(2), 2);
  ASSERT_TRUE(second.has_value());
  EXPECT_NE(*second, first);
  EXPECT_EQ(c.find(snap_key(1)), first);
}

TEST(StateSnapshotCache, APendingSnapshotIsFoundOnlyOnceFulfilledAndIsNeverEvicted) {
  StateSnapshotCache c({StateSlotId(5)});
  const SeqId seq(7);
  const StateSlotId s = *c.insert_rolling(seq, std::nullopt, 3);
  EXPECT_EQ(c.size(), 0);
  c.new_step();
  EXPECT_FALSE(c.insert(snap_key(1), 1).has_value()) << "the pending entry holds the only slot";
  c.fulfil(s, snap_key(3));
  EXPECT_EQ(c.find(snap_key(3)), s);
  EXPECT_EQ(c.deepest(std::vector<BlockKey>{snap_key(1), snap_key(2), snap_key(3)}), 3);
}

TEST(StateSnapshotCache, ACancelledOrDuplicatePendingSnapshotFreesItsSlot) {
  StateSnapshotCache c({StateSlotId(5), StateSlotId(6)});
  const StateSlotId a = *c.insert_rolling(SeqId(1), std::nullopt, 2);
  c.cancel(a);
  EXPECT_EQ(c.size(), 0);
  EXPECT_EQ(c.insert(snap_key(2), 2), a);
  const StateSlotId b = *c.insert_rolling(SeqId(1), std::nullopt, 2);
  c.fulfil(b, snap_key(2));  // the same prefix is cached already
  EXPECT_EQ(c.find(snap_key(2)), a);
  EXPECT_EQ(c.size(), 1);
  c.new_step();
  EXPECT_EQ(c.insert(snap_key(3), 3), b) << "the duplicate's slot is free";
}

// A step launched ahead snapshots a row the host may yet drop: the
// sequence's rolling snapshot stays until the pending one is fulfilled, and
// a cancelled one leaves it in place.
TEST(StateSnapshotCache, APendingRollingSnapshotReplacesTheOwnedOneOnlyWhenFulfilled) {
  StateSnapshotCache c = three_slots();
  const SeqId seq(7);
  const StateSlotId owned = *c.insert_rolling(seq, snap_key(1), 1);
  c.new_step();
  const StateSlotId dropped = *c.insert_rolling(seq, std::nullopt, 2);
  EXPECT_NE(dropped, owned);
  c.cancel(dropped);
  EXPECT_EQ(c.find(snap_key(1)), owned) << "a cancelled snapshot takes nothing away";
  c.new_step();
  const StateSlotId kept = *c.insert_rolling(seq, std::nullopt, 2);
  EXPECT_EQ(c.find(snap_key(1)), owned);
  c.fulfil(kept, snap_key(2));
  EXPECT_EQ(c.find(snap_key(2)), kept);
  EXPECT_FALSE(c.find(snap_key(1)).has_value()) << "the fulfilled one took the owned one's place";
  EXPECT_EQ(c.size(), 1);
  c.new_step();
  EXPECT_EQ(c.insert_rolling(seq, snap_key(3), 3), kept) << "and is the sequence's to rekey";
}

TEST(StateSnapshotCache, ADisownedSnapshotIsKeptOrDropped) {
  StateSnapshotCache c = three_slots();
  c.insert_rolling(SeqId(1), snap_key(1), 1);
  c.insert_rolling(SeqId(2), snap_key(2), 2);
  c.new_step();
  c.disown(SeqId(1), /*drop=*/false);
  c.disown(SeqId(2), /*drop=*/true);
  EXPECT_TRUE(c.find(snap_key(1)).has_value());
  EXPECT_FALSE(c.find(snap_key(2)).has_value());
  // Sequence 1 owns nothing now: its next rolling snapshot takes a new slot.
  const StateSlotId kept = *c.find(snap_key(1));
  EXPECT_NE(c.insert_rolling(SeqId(1), snap_key(3), 3), kept);
  EXPECT_TRUE(c.find(snap_key(1)).has_value());
}

TEST(StateSnapshotCache, AnErasedKeyFreesItsSlotUnlessPinned) {
  StateSnapshotCache c = three_slots();
  const StateSlotId a = *c.insert(snap_key(1), 1);
  c.insert(snap_key(2), 2);
  c.pin(snap_key(2));
  c.new_step();
  c.erase(snap_key(1));
  c.erase(snap_key(2));
  c.erase(snap_key(3));  // not cached: nothing happens
  EXPECT_FALSE(c.find(snap_key(1)).has_value());
  EXPECT_TRUE(c.find(snap_key(2)).has_value());
  EXPECT_EQ(c.size(), 1);
  EXPECT_TRUE(c.insert(snap_key(4), 4).has_value());
  EXPECT_TRUE(c.insert(snap_key(5), 5).has_value());
  EXPECT_TRUE(c.find(snap_key(4)) == a || c.find(snap_key(5)) == a) << "the erased slot was free again";
}

TEST(StateSnapshotCacheDeathTest, UnpinningMoreThanPinnedIsABug) {
  StateSnapshotCache c = three_slots();
  const StateSlotId s = *c.insert(snap_key(1), 1);
  EXPECT_DEATH(c.unpin(s), "unpinned more than pinned");
}

}  // namespace
}  // namespace met
