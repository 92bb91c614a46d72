// Tests for request/stream_publisher.h: sinks with a publisher hand their
// events over in one publish per batch, and cut-off clients are counted.
#include "request/stream_publisher.h"

#include <gtest/gtest.h>

#include "request/response_sink.h"

namespace met {
namespace {

TEST(StreamPublisher, ASinksEventsWaitForThePublish) {
  StreamPublisher publisher;
  auto stream = std::make_shared<ResponseStream>();
  int wakes = 0;
  stream->set_waker([&] { ++wakes; });
  ResponseSink sink(RequestId(1), stream, &publisher);
  sink.delta(DeltaEvent{{5}, "a"});
  sink.delta(DeltaEvent{{6}, "b"});
  sink.finish(FinishEvent{"stop", std::nullopt, {}, 0, 0});
  EXPECT_FALSE(stream->has_events());
  EXPECT_EQ(publisher.publish(TimePoint{}), 0);
  EXPECT_TRUE(publisher.empty());
  EXPECT_EQ(wakes, 1);
  std::vector<StreamEvent> out;
  stream->take(out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(std::get<DeltaEvent>(out[1]).text, "b");
  EXPECT_EQ(std::get<FinishEvent>(out[2]).finish_reason, "stop");
}

TEST(StreamPublisher, EachTouchedStreamIsPublishedOnce) {
  StreamPublisher publisher;
  std::vector<std::shared_ptr<ResponseStream>> streams;
  std::vector<ResponseSink> sinks;
  std::vector<int> wakes(3, 0);
  for (int i = 0; i < 3; ++i) {
    streams.push_back(std::make_shared<ResponseStream>());
    streams.back()->set_waker([&wakes, i] { ++wakes[static_cast<size_t>(i)]; });
    sinks.emplace_back(RequestId(static_cast<uint64_t>(i + 1)), streams.back(), &publisher);
  }
  for (int round = 0; round < 4; ++round) sinks[0].delta(DeltaEvent{{1}, "x"});
  sinks[2].delta(DeltaEvent{{1}, "y"});
  (void)publisher.publish(TimePoint{});
  EXPECT_EQ(wakes, (std::vector<int>{1, 0, 1}));
  for (ResponseSink& s : sinks) s.error("done");
  (void)publisher.publish(TimePoint{});
}

TEST(StreamPublisher, CountsTheClientsItCutsOff) {
  StreamLimits limits;
  limits.max_pending_bytes = 10;
  limits.slow_client_timeout = std::chrono::seconds(1);
  StreamPublisher publisher(limits);
  auto stream = std::make_shared<ResponseStream>();
  ResponseSink sink(RequestId(1), stream, &publisher);
  const TimePoint t0 = TimePoint{} + std::chrono::hours(1);
  sink.delta(DeltaEvent{{1}, "a long text that nobody reads"});
  EXPECT_EQ(publisher.publish(t0), 0);
  sink.delta(DeltaEvent{{1}, "more"});
  EXPECT_EQ(publisher.publish(t0 + std::chrono::seconds(2)), 1);
  EXPECT_TRUE(sink.cancelled());
  EXPECT_NE(sink.cancel_reason().find("--max-pending-bytes"), std::string::npos);
  sink.error(sink.cancel_reason());
  (void)publisher.publish(t0 + std::chrono::seconds(3));
}

}  // namespace
}  // namespace met
