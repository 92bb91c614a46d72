// Tests for RequestWaiter over a bare ResponseStream (no engine).
#include "server/request_waiter.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>

namespace met {
namespace {

// Counts wakes and lets a test wait for the n-th.
class WakeCounter {
 public:
  void wake() {
    std::lock_guard<std::mutex> lock(mu_);
    ++count_;
    cv_.notify_all();
  }
  void wait_for(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return count_ >= n; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int count_ = 0;
};

TEST(RequestWaiter, HandsOverEveryEventInOrderAndWakesForEach) {
  auto stream = std::make_shared<ResponseStream>();
  ResponseSink sink(RequestId(1), stream);
  WakeCounter wakes;
  RequestWaiter waiter(RequestHandle(RequestId(1), stream), [&] { wakes.wake(); });
  sink.delta(DeltaEvent{{1}, "a"});
  sink.delta(DeltaEvent{{2}, "b"});
  FinishEvent finish;
  finish.finish_reason = "stop";
  sink.finish(finish);
  wakes.wait_for(3);
  const std::vector<StreamEvent> events = waiter.take();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(std::get<DeltaEvent>(events[0]).text, "a");
  EXPECT_EQ(std::get<DeltaEvent>(events[1]).text, "b");
  EXPECT_EQ(std::get<FinishEvent>(events[2]).finish_reason, "stop");
  EXPECT_FALSE(waiter.has_events());
}

TEST(RequestWaiter, CancelSetsTheStreamsCancelFlag) {
  auto stream = std::make_shared<ResponseStream>();
  ResponseSink sink(RequestId(2), stream);
  RequestWaiter waiter(RequestHandle(RequestId(2), stream), [] {});
  waiter.cancel();
  EXPECT_TRUE(sink.cancelled());
  sink.error("cancelled");  // what the engine does at its next tick; the waiter's thread then ends
}

}  // namespace
}  // namespace met
