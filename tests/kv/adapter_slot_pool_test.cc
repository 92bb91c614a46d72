// Tests for adapter_slot_pool.h over a FakeDevice with two adapter slots: a
// slot holding an adapter is shared by its users and bound once; a new
// adapter takes an empty slot, then the least recently used one without
// users; every slot busy leaves the pool unchanged; a device refusal
// changes nothing; release of a slot without users is a bug; a plan says
// in order what acquires would give, changing nothing.
#include "kv/adapter_slot_pool.h"

#include <gtest/gtest.h>

#include "testing/fake_device.h"

namespace met {
namespace {

std::shared_ptr<const LoraAdapter> named(const std::string& name, int32_t rank = 4) {
  auto a = std::make_shared<LoraAdapter>();
  a->name = name;
  a->max_rank = rank;
  return a;
}

testing::FakeDeviceOptions two_slots() {
  testing::FakeDeviceOptions o;
  o.num_adapter_slots = 2;
  o.max_lora_rank = 8;
  return o;
}

TEST(AdapterSlotPool, UsersShareTheSlotHoldingTheirAdapter) {
  testing::FakeDevice dev(two_slots());
  AdapterSlotPool pool(dev);
  const auto a = named("a");
  EXPECT_EQ(pool.acquire(a).value(), 0);
  EXPECT_EQ(pool.acquire(a).value(), 0);
  EXPECT_EQ(pool.users(0), 2);
  EXPECT_EQ(dev.num_binds(), 1);
  EXPECT_EQ(dev.bound(0), a.get());
  pool.release(0);
  pool.release(0);
  EXPECT_EQ(pool.num_in_use(), 0);
  EXPECT_EQ(pool.acquire(a).value(), 0);  // still warm: no new bind
  EXPECT_EQ(dev.num_binds(), 1);
}

TEST(AdapterSlotPool, ANewAdapterTakesAnEmptySlotThenTheLeastRecentlyUsedIdleOne) {
  testing::FakeDevice dev(two_slots());
  AdapterSlotPool pool(dev);
  const auto a = named("a"), b = named("b"), c = named("c"), d = named("d");
  EXPECT_EQ(pool.acquire(a).value(), 0);
  EXPECT_EQ(pool.acquire(b).value(), 1);
  EXPECT_EQ(pool.acquire(c).value(), std::nullopt) << "both slots have users";
  EXPECT_EQ(dev.num_binds(), 2);
  pool.release(1);  // b idle first
  pool.release(0);  // then a
  EXPECT_EQ(pool.acquire(c).value(), 1) << "b was idle longer";
  EXPECT_EQ(dev.bound(1), c.get());
  pool.release(1);
  EXPECT_EQ(pool.acquire(d).value(), 0);
  EXPECT_EQ(pool.adapter(0), d.get());
}

TEST(AdapterSlotPool, ARefusedAdapterChangesNothing) {
  testing::FakeDevice dev(two_slots());
  AdapterSlotPool pool(dev);
  auto refused = pool.acquire(named("wide", 64));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("adapter 'wide' has rank 64"), std::string::npos);
  EXPECT_EQ(pool.num_in_use(), 0);
  EXPECT_EQ(pool.adapter(0), nullptr);
  dev.fail_every(testing::DeviceCall::kBindAdapter);
  EXPECT_FALSE(pool.acquire(named("a")).ok());
  EXPECT_EQ(pool.adapter(0), nullptr);
}

TEST(AdapterSlotPool, ReleasingASlotWithoutUsersIsABug) {
  testing::FakeDevice dev(two_slots());
  AdapterSlotPool pool(dev);
  EXPECT_DEATH(pool.release(0), "adapter slot 0 released without users");
}

TEST(AdapterSlotPool, APlanSaysWhatAcquiresWouldGiveAndChangesNothing) {
  testing::FakeDevice dev(two_slots());
  AdapterSlotPool pool(dev);
  const auto a = named("a"), b = named("b"), c = named("c");
  ASSERT_EQ(pool.acquire(a).value(), 0);
  pool.begin_plan();
  EXPECT_TRUE(pool.plan_take(nullptr));  // the base model needs no slot
  EXPECT_TRUE(pool.plan_take(a.get()));  // resident
  EXPECT_TRUE(pool.plan_take(b.get()));  // the empty slot
  EXPECT_TRUE(pool.plan_take(b.get()));  // planned there already
  EXPECT_FALSE(pool.plan_take(c.get()));
  EXPECT_EQ(pool.adapter(1), nullptr);
  EXPECT_EQ(dev.num_binds(), 1);
  pool.release(0);
  pool.begin_plan();  // a idle now: c may take its slot, then a has none
  EXPECT_TRUE(pool.plan_take(c.get()));
  EXPECT_TRUE(pool.plan_take(b.get()));
  EXPECT_FALSE(pool.plan_take(a.get()));
}

}  // namespace
}  // namespace met
