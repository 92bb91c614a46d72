// Tests for state_snapshot_cache.h: snapshots are found by their prefix's
// key, a new one takes a free slot and then the least recently used
// unpinned one of an earlier step, a pinned one is never evicted, and a key
// is cached once.
#include "kv/state_snapshot_cache.h"

#include <gtest/gtest.h>

namespace met {
namespace {

BlockKey snap_key(uint64_t n) { return BlockKey{n, n * 31 + 7}; }

StateSnapshotCache three_slots() { return StateSnapshotCache({StateSlotId(10), StateSlotId(11), StateSlotId(12)}); }

TEST(StateSnapshotCache, ASnapshotIsFoundByItsKeyInTheSlotItWasGiven) {
  StateSnapshotCache c = three_slots();
  EXPECT_EQ(c.capacity(), 3);
  EXPECT_EQ(c.size(), 0);
  const std::optional<StateSlotId> s = c.insert(snap_key(1));
  ASSERT_TRUE(s.has_value());
  EXPECT_GE(s->value(), 10);
  EXPECT_EQ(c.find(snap_key(1)), s);
  EXPECT_FALSE(c.find(snap_key(2)).has_value());
  EXPECT_EQ(c.size(), 1);
  EXPECT_FALSE(c.insert(snap_key(1)).has_value()) << "a key is cached once";
}

TEST(StateSnapshotCache, FreeSlotsFillFirstThenTheLeastRecentlyUsedIsEvicted) {
  StateSnapshotCache c = three_slots();
  const StateSlotId s1 = *c.insert(snap_key(1));
  const StateSlotId s2 = *c.insert(snap_key(2));
  const StateSlotId s3 = *c.insert(snap_key(3));
  EXPECT_NE(s1, s2);
  EXPECT_NE(s2, s3);
  c.unpin(c.pin(snap_key(1)));  // 1 used after 2 and 3
  c.new_step();
  const std::optional<StateSlotId> s4 = c.insert(snap_key(4));
  ASSERT_TRUE(s4.has_value());
  EXPECT_EQ(*s4, s2);
  EXPECT_FALSE(c.find(snap_key(2)).has_value());
  EXPECT_EQ(c.find(snap_key(1)), s1);
  EXPECT_EQ(c.find(snap_key(3)), s3);
}

TEST(StateSnapshotCache, APinnedSnapshotIsNeverEvicted) {
  StateSnapshotCache c({StateSlotId(5)});
  const StateSlotId s = *c.insert(snap_key(1));
  EXPECT_EQ(c.pin(snap_key(1)), s);
  c.new_step();
  EXPECT_FALSE(c.insert(snap_key(2)).has_value());
  EXPECT_EQ(c.find(snap_key(1)), s);
  c.unpin(s);
  EXPECT_EQ(c.insert(snap_key(2)), s);
  EXPECT_FALSE(c.find(snap_key(1)).has_value());
}

TEST(StateSnapshotCache, AStepNeverEvictsASnapshotItWrites) {
  StateSnapshotCache c({StateSlotId(5), StateSlotId(6)});
  c.new_step();
  const StateSlotId a = *c.insert(snap_key(1));
  const StateSlotId b = *c.insert(snap_key(2));
  EXPECT_NE(a, b);
  EXPECT_FALSE(c.insert(snap_key(3)).has_value()) << "both slots are this step's";
  c.new_step();
  EXPECT_EQ(c.insert(snap_key(3)), a);  // the older of the two, now from an earlier step
}

TEST(StateSnapshotCache, WithoutSlotsNothingIsCached) {
  StateSnapshotCache c({});
  EXPECT_EQ(c.capacity(), 0);
  EXPECT_FALSE(c.insert(snap_key(1)).has_value());
  EXPECT_FALSE(c.find(snap_key(1)).has_value());
}

TEST(StateSnapshotCacheDeathTest, UnpinningMoreThanPinnedIsABug) {
  StateSnapshotCache c = three_slots();
  const StateSlotId s = *c.insert(snap_key(1));
  EXPECT_DEATH(c.unpin(s), "unpinned more than pinned");
}

}  // namespace
}  // namespace met
