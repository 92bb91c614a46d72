// Tests for LoRA adapter slots in the scheduler (kv/adapter_slot_pool.h
// through KvManager, scheduler admission and lifecycle), over a FakeDevice
// whose outputs depend on each seq's adapter: every request gets the
// tokens it gets alone, with more adapters than slots, under swap and
// recompute preemption and with the pipeline on; a request whose adapter
// finds every slot busy waits, FCFS, until one frees; every path gives its
// slot reference back (finish, cancel, error, a failing device call); an
// adapter dropped by everyone but its requests keeps serving them and is
// freed once its slot is reused; a device refusing an adapter fails that
// request alone.
#include <gtest/gtest.h>

#include "scheduler_fixture.h"

namespace met {
namespace {

using testing::SchedFixture;
using testing::SchedFixtureOptions;

std::shared_ptr<const LoraAdapter> adapter(const std::string& name, int32_t rank = 8) {
  auto a = std::make_shared<LoraAdapter>();
  a->name = name;
  a->max_rank = rank;
  return a;
}

struct Adapters {
  std::vector<std::shared_ptr<const LoraAdapter>> list = {adapter("a"), adapter("b"), adapter("c"), adapter("d")};
};

// Request i: a prompt of 20 + 7i tokens, 30 outputs, with adapter i % 5
// (4: none).
EngineRequest adapter_request(const Adapters& ads, int i) {
  EngineRequest r = testing::greedy_request(testing::make_prompt(20 + 7 * i, 300 + static_cast<uint32_t>(i)), 30);
  const int k = i % 5;
  if (k < 4) {
    r.adapter = ads.list[static_cast<size_t>(k)];
    r.adapter_id = static_cast<uint64_t>(k + 1);
  }
  return r;
}

SchedFixtureOptions with_slots(SchedFixtureOptions o, int32_t slots) {
  o.device.num_adapter_slots = slots;
  return o;
}

// Runs requests 0..n-1 to the end (testing::run_to_end's checks).
std::vector<std::vector<TokenId>> run_adapters(SchedFixture& f, const Adapters& ads, int n) {
  std::vector<uint64_t> ids;
  for (int i = 0; i < n; ++i) ids.push_back(f.submit(adapter_request(ads, i)));
  return testing::run_to_end(f, ids);
}

// Each request alone, on a roomy device with a slot per adapter.
std::vector<std::vector<TokenId>> alone(const Adapters& ads, int n) {
  std::vector<std::vector<TokenId>> out;
  for (int i = 0; i < n; ++i) {
    SchedFixture f(with_slots({}, 4));
    const uint64_t id = f.submit(adapter_request(ads, i));
    f.run();
    out.push_back(f.req.at(id).tokens);
  }
  return out;
}

TEST(SchedulerAdapters, EveryRequestGetsItsTokensAloneWithMoreAdaptersThanSlots) {
  Adapters ads;
  const auto want = alone(ads, 10);
  EXPECT_NE(want[0], want[1]) << "adapters a and b give the same tokens: the test could not tell them apart";
  EXPECT_NE(want[0], want[4]) << "adapter a gives the base model's tokens";
  for (const bool pipeline : {false, true}) {
    SchedFixtureOptions o = with_slots({}, 2);
    o.sched.pipeline = pipeline;
    SchedFixture f(o);
    EXPECT_EQ(run_adapters(f, ads, 10), want) << "pipeline " << pipeline;
    EXPECT_GT(f.device->num_binds(), 2) << "two slots served four adapters without rebinding";
  }
}

TEST(SchedulerAdapters, SwapAndRecomputeKeepEachRequestsAdapter) {
  Adapters ads;
  const auto want = alone(ads, 8);
  SchedFixture swapped(with_slots(testing::tight_swap_pool(), 3));
  EXPECT_EQ(run_adapters(swapped, ads, 8), want);
  EXPECT_GT(swapped.tel.num_swaps, 0);
  SchedFixtureOptions tight = with_slots(testing::tight_swap_pool(), 3);
  tight.sched.preempt = PreemptMode::kRecompute;
  tight.with_spill = false;
  SchedFixture recomputed(tight);
  EXPECT_EQ(run_adapters(recomputed, ads, 8), want);
  EXPECT_GT(recomputed.tel.num_recomputes, 0);
}

TEST(SchedulerAdapters, ARequestWhoseAdapterFindsEverySlotBusyWaitsUntilOneFrees) {
  Adapters ads;
  SchedFixture f(with_slots({}, 1));
  EngineRequest first = testing::greedy_request(testing::make_prompt(20, 1), 12);
  first.adapter = ads.list[0];
  first.adapter_id = 1;
  const uint64_t a = f.submit(std::move(first));
  EngineRequest second = testing::greedy_request(testing::make_prompt(20, 2), 12);
  second.adapter = ads.list[1];
  second.adapter_id = 2;
  const uint64_t b = f.submit(std::move(second));
  const uint64_t c = f.submit(testing::greedy_request(testing::make_prompt(20, 3), 12));  // the base model
  bool b_started_before_a_finished = false, c_started_before_b = false;
  for (int ticks = 0; !f.sched->idle() && ticks < 1000; ++ticks) {
    f.sched->tick();
    if (!f.req.at(b).tokens.empty() && f.req.at(a).finishes.empty()) b_started_before_a_finished = true;
    if (!f.req.at(c).tokens.empty() && f.req.at(b).tokens.empty()) c_started_before_b = true;
  }
  EXPECT_FALSE(b_started_before_a_finished) << "two adapters ran at once in one slot";
  EXPECT_FALSE(c_started_before_b) << "admission passed a waiting request (FCFS)";
  for (uint64_t id : {a, b, c}) EXPECT_EQ(f.req.at(id).finishes.size(), 1u);
  EXPECT_EQ(f.device->num_binds(), 2);
  EXPECT_TRUE(f.pool_is_full());
}

TEST(SchedulerAdapters, ACancelledRequestGivesItsSlotBack) {
  Adapters ads;
  SchedFixture f(with_slots({}, 1));
  auto stream = std::make_shared<ResponseStream>();
  EngineRequest r = testing::greedy_request(testing::make_prompt(30, 4), 1000);
  r.adapter = ads.list[0];
  r.adapter_id = 1;
  f.sched->enqueue(std::move(r), ResponseSink(RequestId(99), stream), f.clock.now());
  for (int i = 0; i < 3; ++i) f.sched->tick();
  EXPECT_EQ(f.kv->adapter_slots().users(0), 1);
  stream->cancel();
  f.run();
  EXPECT_EQ(f.req.at(99).errors.size(), 1u);
  EXPECT_TRUE(f.pool_is_full());
  EXPECT_EQ(f.kv->adapter_slots().adapter(0), ads.list[0].get()) << "an idle adapter stays warm in its slot";
}

TEST(SchedulerAdapters, AFailureAtAnyDeviceCallAnswersEveryRequestOnceAndFreesEverySlot) {
  Adapters ads;
  int64_t total = 0;
  {
    SchedFixture clean(with_slots(testing::tight_swap_pool(), 3));
    run_adapters(clean, ads, 8);
    total = clean.device->num_calls();
  }
  ASSERT_GT(total, 20);
  for (int64_t n = 0; n < total; ++n) {
    ScopedFaultReset reset;
    SchedFixture f(with_slots(testing::tight_swap_pool(), 3));
    f.device->fail_call(n);
    std::vector<uint64_t> ids;
    for (int i = 0; i < 8; ++i) ids.push_back(f.submit(adapter_request(ads, i)));
    f.run();
    for (uint64_t id : ids) ASSERT_EQ(f.req.at(id).num_terminal(), 1) << "failing call " << n;
    EXPECT_TRUE(f.pool_is_full()) << "failing call " << n;
  }
}

TEST(SchedulerAdapters, ADeviceRefusingAnAdapterFailsItsRequestAlone) {
  Adapters ads;
  SchedFixtureOptions o = with_slots({}, 2);
  o.device.max_lora_rank = 8;
  SchedFixture f(o);
  EngineRequest wide = testing::greedy_request(testing::make_prompt(20, 5), 10);
  wide.adapter = adapter("wide", 64);
  wide.adapter_id = 9;
  const uint64_t bad = f.submit(std::move(wide));
  EngineRequest fine = testing::greedy_request(testing::make_prompt(20, 6), 10);
  fine.adapter = ads.list[2];
  fine.adapter_id = 3;
  const uint64_t good = f.submit(std::move(fine));
  f.run();
  ASSERT_EQ(f.req.at(bad).errors.size(), 1u);
  EXPECT_NE(f.req.at(bad).errors[0].find("adapter 'wide' has rank 64"), std::string::npos) << f.req.at(bad).errors[0];
  EXPECT_EQ(f.req.at(good).finishes.size(), 1u);
  EXPECT_TRUE(f.pool_is_full());
}

TEST(SchedulerAdapters, AnAdapterDroppedByAllButItsRequestsServesThemAndIsFreedWhenItsSlotIsReused) {
  SchedFixture f(with_slots({}, 1));
  std::shared_ptr<const LoraAdapter> x = adapter("x");
  const std::weak_ptr<const LoraAdapter> weak = x;
  EngineRequest r = testing::greedy_request(testing::make_prompt(20, 7), 10);
  r.adapter = std::move(x);  // the only holder now, as after an unload
  r.adapter_id = 5;
  const uint64_t first = f.submit(std::move(r));
  f.run();
  EXPECT_EQ(f.req.at(first).finishes.size(), 1u);
  EXPECT_FALSE(weak.expired()) << "warm in its slot";
  EngineRequest next = testing::greedy_request(testing::make_prompt(20, 8), 10);
  next.adapter = adapter("y");
  next.adapter_id = 6;
  f.submit(std::move(next));
  f.run();
  EXPECT_TRUE(weak.expired()) << "the slot was reused and the dropped adapter is still held";
  EXPECT_TRUE(f.pool_is_full());
}

TEST(SchedulerAdapters, ARequestWithAnAdapterIsRefusedWhereTheDeviceRunsNone) {
  EngineRequest r = testing::greedy_request(testing::make_prompt(10, 9), 5);
  r.adapter = adapter("a");
  r.adapter_id = 1;
  RequestLimits limits{512, 4096, 64, 0, 0};
  const Status s = validate_request(r, limits);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("this engine runs none"), std::string::npos);
  limits.num_adapter_slots = 1;
  EXPECT_TRUE(validate_request(r, limits).ok());
  r.adapter_id = 0;  // an adapter under the base model's cache salt
  EXPECT_NE(validate_request(r, limits).message().find("adapter_id 0 does not match"), std::string::npos);
}

}  // namespace
}  // namespace met
