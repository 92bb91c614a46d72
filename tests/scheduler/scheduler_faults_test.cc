// Tests for scheduler/scheduler.h under injected faults: a failure at each
// device call and at each spill call of a preempting run, and a corrupt spill
// image. Every request still gets exactly one terminal frame and nothing leaks.
#include "scheduler/scheduler.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/fault_flag.h"
#include "scheduler_fixture.h"

namespace met {
namespace {

using testing::run_many;
using testing::SchedFixture;
using testing::SchedFixtureOptions;

// Every device call of a run with preemption fails in turn: each request
// still gets exactly one terminal frame and the pool is full after.
TEST(Scheduler, AFailureAtAnyDeviceCallAnswersEveryRequestOnce) {
  testing::for_each_failing_call(testing::tight_swap_pool(), testing::FaultPort::kDevice, 10,
                                 [](SchedFixture& f, int64_t n) {
                                   EXPECT_TRUE(std::filesystem::is_empty(f.spill_dir.path())) << "failing call " << n;
                                 });
}

TEST(Scheduler, AFailureAtAnySpillCallAnswersEveryRequestOnce) {
  const SchedFixtureOptions o = testing::tight_swap_pool();
  int64_t total_calls = 0;
  std::vector<std::vector<TokenId>> want;
  {
    SchedFixture clean(o);
    want = run_many(clean, 6);
    total_calls = clean.spill->num_calls();
  }
  ASSERT_GT(total_calls, 2);
  for (int64_t n = 0; n < total_calls; ++n) {
    SchedFixture f(o);
    f.spill->fail_call(n);
    const std::vector<uint64_t> ids = testing::submit_many(f, 6);
    f.run();
    int num_errors = 0;
    for (size_t i = 0; i < ids.size(); ++i) {
      const auto& rec = f.req.at(ids[i]);
      ASSERT_EQ(rec.num_terminal(), 1) << "failing spill call " << n;
      if (!rec.errors.empty()) {
        ++num_errors;
      } else {
        EXPECT_EQ(rec.tokens, want[i]) << "a request the failure did not touch changed, call " << n;
      }
    }
    EXPECT_LE(num_errors, 1) << "one failed spill call fails at most one request";
    EXPECT_TRUE(f.pool_is_full()) << "failing spill call " << n;
  }
}

TEST(Scheduler, ACorruptSpillImageFailsOnlyItsOwnRequest) {
  const SchedFixtureOptions o = testing::tight_swap_pool();
  std::vector<std::vector<TokenId>> want;
  {
    SchedFixture clean(o);
    want = run_many(clean, 6);
  }
  SchedFixture f(o);
  const std::vector<uint64_t> ids = testing::submit_many(f, 6);
  bool corrupted = false;
  while (!f.sched->idle()) {
    f.sched->tick();
    if (corrupted) continue;
    for (const auto& e : std::filesystem::directory_iterator(f.spill_dir.path())) {
      std::fstream file(e.path(), std::ios::in | std::ios::out | std::ios::binary);
      file.seekg(-1, std::ios::end);
      char c = 0;
      file.read(&c, 1);
      c = static_cast<char>(c ^ 0x5a);
      file.seekp(-1, std::ios::end);
      file.write(&c, 1);
      corrupted = true;
      break;
    }
  }
  ASSERT_TRUE(corrupted);
  int num_errors = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    const auto& rec = f.req.at(ids[i]);
    ASSERT_EQ(rec.num_terminal(), 1);
    if (!rec.errors.empty()) {
      ++num_errors;
      EXPECT_NE(rec.errors[0].find("swap-in failed"), std::string::npos) << rec.errors[0];
    } else {
      EXPECT_EQ(rec.tokens, want[i]);
    }
  }
  EXPECT_EQ(num_errors, 1);
  EXPECT_TRUE(f.pool_is_full());
  EXPECT_TRUE(std::filesystem::is_empty(f.spill_dir.path()));
}

}  // namespace
}  // namespace met
