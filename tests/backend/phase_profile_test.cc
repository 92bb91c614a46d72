// Tests for PhaseProfile through a WorkerPool: each phase is charged to the
// line of the barrier that ends it, once per job, with at least the time its
// slowest thread took; a partner's lateness is thread 0's wait; the job's
// last phase has its own row; reset and a pool without a profile record
// nothing.
#include "backend/cpu/phase_profile.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "backend/cpu/worker_pool.h"

namespace met::cpu {
namespace {

using std::chrono::milliseconds;

const PhaseStat* find_line(const std::vector<PhaseStat>& stats, uint32_t line) {
  for (const PhaseStat& s : stats) {
    if (s.line == line) return &s;
  }
  return nullptr;
}

// Two phases a job: thread 0 sleeps `first` before the first barrier, thread
// 1 sleeps `second` before the second. Returns the two barriers' lines.
std::pair<uint32_t, uint32_t> run_two_phases(WorkerPool& pool, int jobs, milliseconds first, milliseconds second) {
  uint32_t lines[2] = {0, 0};
  for (int j = 0; j < jobs; ++j) {
    pool.run([&](ThreadCtx& ctx) {
      if (ctx.ith() == 0) std::this_thread::sleep_for(first);
      const CallSite a = CallSite::here();
      ctx.barrier(a);
      if (ctx.ith() == 1) std::this_thread::sleep_for(second);
      const CallSite b = CallSite::here();
      ctx.barrier(b);
      if (ctx.ith() == 0) lines[0] = a.line, lines[1] = b.line;
    });
  }
  return {lines[0], lines[1]};
}

// A two-thread pool timing its jobs into `profile`.
class PhaseProfileTest : public ::testing::Test {
 protected:
  PhaseProfileTest() { pool.set_phase_profile(&profile); }
  PhaseProfile profile;
  WorkerPool pool{2};
};

TEST_F(PhaseProfileTest, EachPhaseIsChargedToTheBarrierThatEndsIt) {
  const auto [first, second] = run_two_phases(pool, 3, milliseconds(20), milliseconds(0));
  const std::vector<PhaseStat> stats = profile.snapshot();
  EXPECT_EQ(profile.jobs(), 3);
  ASSERT_EQ(stats.size(), 3u);  // two barriers and the job's last phase
  const PhaseStat* a = find_line(stats, first);
  const PhaseStat* b = find_line(stats, second);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(a->calls, 3);
  EXPECT_EQ(b->calls, 3);
  EXPECT_GE(a->seconds, 0.060);  // thread 0 slept 20 ms in it, three times
  EXPECT_EQ(a->file, "tests/backend/phase_profile_test.cc");
  EXPECT_EQ(stats.front().line, first);  // the longest first
  EXPECT_EQ(a->function, "operator()") << a->function;  // the job's lambda
  const auto last = std::find_if(stats.begin(), stats.end(), [](const PhaseStat& s) {
    return s.function == "(the job's last phase)";
  });
  ASSERT_NE(last, stats.end());
  EXPECT_EQ(last->calls, 3);
}

// (Bounds with slack: thread 1's sleep starts when it leaves the first
// barrier, thread 0's clock when it notices it left, a few µs apart unless
// the host deschedules one of them.)
TEST_F(PhaseProfileTest, APartnersLatenessIsThreadZerosWait) {
  const auto [first, second] = run_two_phases(pool, 2, milliseconds(0), milliseconds(30));
  const std::vector<PhaseStat> stats = profile.snapshot();
  const PhaseStat* b = find_line(stats, second);
  ASSERT_NE(b, nullptr);
  EXPECT_GE(b->seconds, 0.040);
  EXPECT_LE(b->waited_seconds, b->seconds);
  EXPECT_GE(b->waited_seconds, 0.5 * b->seconds);  // thread 0 had nothing to do but wait
  const PhaseStat* a = find_line(stats, first);
  ASSERT_NE(a, nullptr);
  EXPECT_LT(a->waited_seconds, b->waited_seconds);
}

TEST_F(PhaseProfileTest, ResetAndAPoolWithoutOneRecordNothing) {
  run_two_phases(pool, 1, milliseconds(0), milliseconds(0));
  EXPECT_FALSE(profile.snapshot().empty());
  profile.reset();
  EXPECT_TRUE(profile.snapshot().empty());
  EXPECT_EQ(profile.jobs(), 0);
  pool.set_phase_profile(nullptr);
  run_two_phases(pool, 2, milliseconds(0), milliseconds(0));
  EXPECT_TRUE(profile.snapshot().empty());
  EXPECT_EQ(profile.jobs(), 0);
}

}  // namespace
}  // namespace met::cpu
