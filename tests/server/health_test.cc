// Tests for the /health decision (a pure function over plain values), fed
// by EngineStats driven with a FakeClock as the engine thread drives it.
#include "server/health.h"

#include <gtest/gtest.h>

namespace met {
namespace {

using std::chrono::seconds;

constexpr Duration kStall = seconds(10);

HealthInputs inputs_from(const EngineStats& stats) {
  HealthInputs in;
  in.stats = stats.snapshot();
  in.stall_timeout = kStall;
  return in;
}

TEST(Health, AnIdleEngineIsOk) {
  FakeClock clock;
  EngineStats stats(clock);
  stats.publish_load(SchedulerCounts{}, /*has_work=*/false, PoolUse{});
  clock.advance(seconds(3600));
  const HealthVerdict v = decide_health(inputs_from(stats));
  EXPECT_EQ(v.state, HealthState::kOk);
  EXPECT_EQ(health_http_status(v.state), 200);
  EXPECT_EQ(health_body(v).dump(), R"({"status":"ok"})");
}

TEST(Health, LoadingAndFaultedAre503WithTheirStatus) {
  HealthInputs loading;
  loading.loading = true;
  EXPECT_EQ(decide_health(loading).state, HealthState::kLoading);
  EXPECT_EQ(health_body(decide_health(loading))["status"], "loading");
  HealthInputs faulted;
  faulted.fault = "device step failed";
  const HealthVerdict v = decide_health(faulted);
  EXPECT_EQ(v.state, HealthState::kFaulted);
  EXPECT_EQ(health_http_status(v.state), 503);
  EXPECT_EQ(health_body(v)["reason"], "device step failed");
}

TEST(Health, WorkThatCompletesNoStepWithinTheStallTimeoutIsStalled) {
  FakeClock clock;
  EngineStats stats(clock);
  stats.publish_load(SchedulerCounts{.num_waiting = 1}, /*has_work=*/true, PoolUse{});
  clock.advance(seconds(9));
  EXPECT_EQ(decide_health(inputs_from(stats)).state, HealthState::kOk);
  clock.advance(seconds(2));
  const HealthVerdict v = decide_health(inputs_from(stats));
  EXPECT_EQ(v.state, HealthState::kStalled);
  EXPECT_EQ(health_http_status(v.state), 503);
  EXPECT_NE(v.reason.find("--stall-timeout"), std::string::npos) << v.reason;
}

TEST(Health, ACompletedStepRestartsTheStallClock) {
  FakeClock clock;
  EngineStats stats(clock);
  stats.publish_load(SchedulerCounts{.num_active = 1}, /*has_work=*/true, PoolUse{.blocks = 1});
  clock.advance(seconds(8));
  stats.step_done(StepRecord{.num_rows = 1, .num_blocks_in_use = 1});
  clock.advance(seconds(8));
  EXPECT_EQ(decide_health(inputs_from(stats)).state, HealthState::kOk);
  clock.advance(seconds(3));
  EXPECT_EQ(decide_health(inputs_from(stats)).state, HealthState::kStalled);
}

TEST(Health, WorkArrivingAfterALongIdleSpellIsNotAStall) {
  FakeClock clock;
  EngineStats stats(clock);
  stats.publish_load(SchedulerCounts{.num_active = 1}, /*has_work=*/true, PoolUse{.blocks = 1});
  stats.step_done(StepRecord{.num_rows = 1, .num_blocks_in_use = 1});
  stats.publish_load(SchedulerCounts{}, /*has_work=*/false, PoolUse{});
  clock.advance(seconds(600));
  stats.publish_load(SchedulerCounts{.num_waiting = 1}, /*has_work=*/true, PoolUse{});
  clock.advance(seconds(1));
  EXPECT_EQ(decide_health(inputs_from(stats)).state, HealthState::kOk);
}

TEST(Health, WithoutAStallTimeoutSlowWorkIsOk) {
  FakeClock clock;
  EngineStats stats(clock);
  stats.publish_load(SchedulerCounts{.num_waiting = 1}, /*has_work=*/true, PoolUse{});
  clock.advance(seconds(3600));
  HealthInputs in = inputs_from(stats);
  in.stall_timeout.reset();
  EXPECT_EQ(decide_health(in).state, HealthState::kOk);
}

TEST(Health, AFaultOutranksLoadingAndStalls) {
  HealthInputs in;
  in.loading = true;
  in.fault = "boom";
  EXPECT_EQ(decide_health(in).state, HealthState::kFaulted);
}

}  // namespace
}  // namespace met
