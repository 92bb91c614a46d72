// Tests for state_slot_pool.h: slots are handed out once each, come back on
// release, an exhausted pool says so without changing, and a double release
// is caught.
#include "kv/state_slot_pool.h"

#include <gtest/gtest.h>

#include <set>

namespace met {
namespace {

TEST(StateSlotPool, HandsOutEachSlotOnceThenRunsOut) {
  StateSlotPool pool(3);
  std::set<int32_t> got;
  for (int i = 0; i < 3; ++i) {
    const std::optional<StateSlotId> s = pool.acquire();
    ASSERT_TRUE(s.has_value());
    got.insert(s->value());
  }
  EXPECT_EQ(got, (std::set<int32_t>{0, 1, 2}));
  EXPECT_FALSE(pool.acquire().has_value());
  EXPECT_EQ(pool.num_free(), 0);
  EXPECT_EQ(pool.num_in_use(), 3);
}

TEST(StateSlotPool, AReleasedSlotIsTheNextOneHandedOut) {
  StateSlotPool pool(4);
  const StateSlotId a = *pool.acquire();
  const StateSlotId b = *pool.acquire();
  EXPECT_EQ(a.value(), 0);
  EXPECT_EQ(b.value(), 1);
  pool.release(a);
  EXPECT_EQ(pool.num_free(), 3);
  EXPECT_EQ(pool.acquire()->value(), a.value());
}

TEST(StateSlotPool, AnEmptyPoolHasNothingToGive) {
  StateSlotPool pool(0);
  EXPECT_EQ(pool.num_slots(), 0);
  EXPECT_FALSE(pool.acquire().has_value());
}

TEST(StateSlotPoolDeathTest, ReleasingAFreeSlotIsABug) {
  StateSlotPool pool(2);
  const StateSlotId a = *pool.acquire();
  pool.release(a);
  EXPECT_DEATH(pool.release(a), "released twice");
}

}  // namespace
}  // namespace met
