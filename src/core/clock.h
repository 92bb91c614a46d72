// Clock: the time port (DESIGN.md's `clock`). Everything that reads the time
// for a decision (deadlines, TTFT, decode time) takes a Clock&, so tests drive
// it with FakeClock. RealClock reads std::chrono::steady_clock.
// Threading: RealClock is stateless; FakeClock's time is atomic, so a test
// thread may advance it while the engine thread reads it.
// Tested by tests/core/clock_test.cc.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace met {

using TimePoint = std::chrono::steady_clock::time_point;
using Duration = std::chrono::steady_clock::duration;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint now() const = 0;
};

class RealClock final : public Clock {
 public:
  TimePoint now() const override { return std::chrono::steady_clock::now(); }
};

// Starts at an arbitrary fixed point; moves only when told to.
class FakeClock final : public Clock {
 public:
  TimePoint now() const override { return TimePoint(Duration(ticks_.load(std::memory_order_acquire))); }
  void advance(Duration d) { ticks_.fetch_add(d.count(), std::memory_order_acq_rel); }

 private:
  std::atomic<Duration::rep> ticks_{Duration(std::chrono::hours(1)).count()};
};

inline double ms_between(TimePoint from, TimePoint to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

}  // namespace met
