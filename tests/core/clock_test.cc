// Tests for core/clock.h.
#include "core/clock.h"

#include <gtest/gtest.h>

namespace met {
namespace {

using std::chrono::milliseconds;

TEST(FakeClock, StandsStillUntilAdvanced) {
  FakeClock clock;
  const TimePoint t0 = clock.now();
  EXPECT_EQ(clock.now(), t0);
  clock.advance(milliseconds(250));
  EXPECT_EQ(clock.now() - t0, milliseconds(250));
  EXPECT_DOUBLE_EQ(ms_between(t0, clock.now()), 250.0);
}

TEST(RealClock, NeverGoesBackwards) {
  RealClock clock;
  const TimePoint a = clock.now();
  const TimePoint b = clock.now();
  EXPECT_LE(a, b);
}

}  // namespace
}  // namespace met
