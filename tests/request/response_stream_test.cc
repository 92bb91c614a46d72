// Tests for request/response_stream.h: staging, one publish per batch,
// wakers, the blocking and non-blocking reads, and the unsent-bytes bound.
#include "request/response_stream.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "testing/allocation_counter.h"

namespace met {
namespace {

StreamLimits limits(size_t max_bytes, Duration timeout) {
  StreamLimits l;
  l.max_pending_bytes = max_bytes;
  l.slow_client_timeout = timeout;
  return l;
}

DeltaEvent delta(std::string text) { return DeltaEvent{{1}, std::move(text)}; }

TEST(ResponseStream, StagedEventsReachTheClientOnlyWhenPublished) {
  ResponseStream s;
  s.stage(delta("a"));
  s.stage(delta("b"));
  EXPECT_TRUE(s.has_staged());
  EXPECT_FALSE(s.has_events());
  EXPECT_EQ(s.publish(TimePoint{}, StreamLimits{}), PublishOutcome::kPublished);
  EXPECT_FALSE(s.has_staged());
  std::vector<StreamEvent> out;
  s.take(out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(std::get<DeltaEvent>(out[0]).text, "a");
  EXPECT_EQ(std::get<DeltaEvent>(out[1]).text, "b");
  EXPECT_FALSE(s.has_events());
}

TEST(ResponseStream, EventsComeOutInOrderAsTheQueueWrapsAroundAndGrows) {
  ResponseStream s;
  std::vector<std::string> want;
  std::vector<std::string> got;
  std::vector<StreamEvent> out;
  int n = 0;
  // 5 published, 3 taken, then 20 more: the queue wraps and grows while its
  // oldest events sit in the middle of its storage.
  for (const int batch : {5, 20, 7}) {
    for (int i = 0; i < batch; ++i) {
      want.push_back(std::to_string(n));
      s.stage(delta(std::to_string(n++)));
    }
    s.publish(TimePoint{}, StreamLimits{});
    StreamEvent e;
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(s.pop_for(e, std::chrono::milliseconds(0)));
      got.push_back(std::get<DeltaEvent>(e).text);
    }
  }
  FinishEvent fin;
  fin.finish_reason = "stop";
  s.stage(std::move(fin));
  s.publish(TimePoint{}, StreamLimits{});
  s.take(out);
  for (const StreamEvent& e : out) {
    if (const auto* d = std::get_if<DeltaEvent>(&e)) got.push_back(d->text);
  }
  EXPECT_EQ(got, want);
  ASSERT_FALSE(out.empty());
  EXPECT_TRUE(std::holds_alternative<FinishEvent>(out.back()));
}

TEST(ResponseStream, AClientThatKeepsUpCostsTheEngineSideNoAllocation) {
  ResponseStream s;
  const DeltaEvent d{{42}, "Once"};
  StreamEvent e;
  int64_t engine_side = 0;
  for (int round = 0; round < 100; ++round) {
    const int64_t before = testing::num_allocations();
    s.stage(d);
    s.publish(TimePoint{}, StreamLimits{});
    engine_side += testing::num_allocations() - before;
    ASSERT_TRUE(s.pop_for(e, std::chrono::milliseconds(0)));  // the client's copy
  }
  EXPECT_EQ(engine_side, 0);
  EXPECT_EQ(std::get<DeltaEvent>(e).text, "Once");
}

TEST(ResponseStream, OnePublishWakesTheClientOnceWhateverTheNumberOfEvents) {
  ResponseStream s;
  int wakes = 0;
  s.set_waker([&] { ++wakes; });
  EXPECT_EQ(wakes, 0);  // nothing waiting yet
  for (int i = 0; i < 5; ++i) s.stage(delta("x"));
  (void)s.publish(TimePoint{}, StreamLimits{});
  EXPECT_EQ(wakes, 1);
  (void)s.publish(TimePoint{}, StreamLimits{});  // nothing staged: no wake
  EXPECT_EQ(wakes, 1);
}

TEST(ResponseStream, AWakerSetWhileEventsWaitRunsAtOnce) {
  ResponseStream s;
  s.push(delta("a"));
  int wakes = 0;
  s.set_waker([&] { ++wakes; });
  EXPECT_EQ(wakes, 1);
}

TEST(ResponseStream, AClearedWakerNeverRunsAgain) {
  ResponseStream s;
  int wakes = 0;
  s.set_waker([&] { ++wakes; });
  s.clear_waker();
  s.push(delta("a"));
  EXPECT_EQ(wakes, 0);
}

TEST(ResponseStream, NothingIsTakenAfterTheTerminalEvent) {
  ResponseStream s;
  s.push(FinishEvent{"stop", std::nullopt, {}, 0, 0});
  s.push(delta("late"));  // a bug elsewhere; the client must not see it
  std::vector<StreamEvent> out;
  s.take(out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(is_terminal(out[0]));
  s.take(out);
  EXPECT_EQ(out.size(), 1u);
  StreamEvent e;
  EXPECT_FALSE(s.pop(e));
}

TEST(ResponseStream, PopWaitsForAPublishFromAnotherThread) {
  ResponseStream s;
  std::thread engine([&] {
    s.stage(delta("a"));
    (void)s.publish(TimePoint{}, StreamLimits{});
  });
  StreamEvent e;
  ASSERT_TRUE(s.pop(e));
  EXPECT_EQ(std::get<DeltaEvent>(e).text, "a");
  engine.join();
}

TEST(ResponseStream, UnsentBytesCountWhatIsPublishedAndNotTaken) {
  ResponseStream s;
  s.push(delta(std::string(1000, 'x')));
  EXPECT_GE(s.unsent_bytes(), 1000u);
  std::vector<StreamEvent> out;
  s.take(out);
  EXPECT_EQ(s.unsent_bytes(), 0u);
}

TEST(ResponseStream, AClientOverTheBoundIsCutOffOnlyAfterTheTimeout) {
  ResponseStream s;
  const StreamLimits l = limits(100, std::chrono::seconds(5));
  const TimePoint t0 = TimePoint{} + std::chrono::hours(1);
  s.stage(delta(std::string(200, 'x')));
  EXPECT_EQ(s.publish(t0, l), PublishOutcome::kPublished);  // over since t0
  s.stage(delta("y"));
  EXPECT_EQ(s.publish(t0 + std::chrono::seconds(4), l), PublishOutcome::kPublished);
  EXPECT_FALSE(s.cancelled());
  s.stage(delta("z"));
  EXPECT_EQ(s.publish(t0 + std::chrono::seconds(5), l), PublishOutcome::kCutOff);
  EXPECT_TRUE(s.cancelled());
  EXPECT_NE(s.cancel_reason().find("read too slowly"), std::string::npos);
  s.stage(delta("w"));
  EXPECT_EQ(s.publish(t0 + std::chrono::seconds(9), l), PublishOutcome::kPublished);  // cut off once
}

TEST(ResponseStream, AClientThatCatchesUpStartsTheTimeoutAfresh) {
  ResponseStream s;
  const StreamLimits l = limits(300, std::chrono::seconds(5));
  const TimePoint t0 = TimePoint{} + std::chrono::hours(1);
  s.stage(delta(std::string(400, 'x')));
  (void)s.publish(t0, l);  // over since t0
  std::vector<StreamEvent> out;
  s.take(out);  // caught up
  s.stage(delta(std::string(400, 'x')));
  EXPECT_EQ(s.publish(t0 + std::chrono::seconds(4), l), PublishOutcome::kPublished);  // over since 4 s
  s.stage(delta("z"));
  EXPECT_EQ(s.publish(t0 + std::chrono::seconds(8), l), PublishOutcome::kPublished);
  EXPECT_FALSE(s.cancelled());
  s.stage(delta("z"));
  EXPECT_EQ(s.publish(t0 + std::chrono::seconds(9), l), PublishOutcome::kCutOff);
}

TEST(ResponseStream, CancelKeepsTheFirstReason) {
  ResponseStream s;
  s.cancel("first");
  s.cancel("second");
  EXPECT_TRUE(s.cancelled());
  EXPECT_EQ(s.cancel_reason(), "first");
}

}  // namespace
}  // namespace met
