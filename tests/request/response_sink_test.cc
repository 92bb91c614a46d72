// Tests for request/response_sink.h.
#include "request/response_sink.h"

#include <gtest/gtest.h>

#include <thread>

namespace met {
namespace {

TEST(ResponseSink, DeliversDeltasThenOneFinalFrameInOrder) {
  auto stream = std::make_shared<ResponseStream>();
  ResponseSink sink(RequestId(1), stream);
  sink.delta(DeltaEvent{{5}, "a"});
  sink.delta(DeltaEvent{{6}, "b"});
  sink.finish(FinishEvent{"stop", std::nullopt, {}, 0, 0});
  EXPECT_TRUE(sink.is_terminated());
  StreamEvent e;
  ASSERT_TRUE(stream->pop(e));
  EXPECT_EQ(std::get<DeltaEvent>(e).text, "a");
  ASSERT_TRUE(stream->pop(e));
  EXPECT_EQ(std::get<DeltaEvent>(e).text, "b");
  ASSERT_TRUE(stream->pop(e));
  EXPECT_EQ(std::get<FinishEvent>(e).finish_reason, "stop");
  EXPECT_FALSE(stream->pop(e));  // nothing after the final frame
}

TEST(ResponseSink, ASinkDroppedWithoutAFinalFrameAnswersWithAnError) {
  auto stream = std::make_shared<ResponseStream>();
  {
    ResponseSink sink(RequestId(2), stream);
    sink.delta(DeltaEvent{{5}, "a"});
  }
  StreamEvent e;
  ASSERT_TRUE(stream->pop(e));
  ASSERT_TRUE(stream->pop(e));
  ASSERT_TRUE(std::holds_alternative<ErrorEvent>(e));
  EXPECT_NE(std::get<ErrorEvent>(e).message.find("dropped"), std::string::npos);
}

TEST(ResponseSink, AMovedFromSinkSendsNothing) {
  auto stream = std::make_shared<ResponseStream>();
  ResponseSink a(RequestId(3), stream);
  ResponseSink b = std::move(a);
  b.error("no");
  StreamEvent e;
  ASSERT_TRUE(stream->pop(e));
  EXPECT_EQ(std::get<ErrorEvent>(e).message, "no");
  EXPECT_FALSE(stream->pop_for(e, std::chrono::milliseconds(1)));
}

TEST(ResponseSinkDeathTest, ASecondFinalFrameIsABug) {
  EXPECT_DEATH(
      {
        ResponseSink sink(RequestId(4), nullptr);
        sink.finish(FinishEvent{});
        sink.error("again");
      },
      "second final frame");
}

TEST(ResponseStream, CancelIsSeenByTheSink) {
  auto stream = std::make_shared<ResponseStream>();
  ResponseSink sink(RequestId(5), stream);
  EXPECT_FALSE(sink.cancelled());
  stream->cancel();
  EXPECT_TRUE(sink.cancelled());
  sink.error("cancelled");
}

TEST(ResponseStream, PopWaitsForAnotherThreadsPush) {
  auto stream = std::make_shared<ResponseStream>();
  std::thread producer([&] {
    ResponseSink sink(RequestId(6), stream);
    sink.finish(FinishEvent{"length", std::nullopt, {}, 0, 0});
  });
  StreamEvent e;
  ASSERT_TRUE(stream->pop(e));
  EXPECT_EQ(std::get<FinishEvent>(e).finish_reason, "length");
  producer.join();
}

TEST(ResponseStream, PopForGivesUpWhenNothingArrives) {
  ResponseStream stream;
  StreamEvent e;
  EXPECT_FALSE(stream.pop_for(e, std::chrono::milliseconds(1)));
}

}  // namespace
}  // namespace met
