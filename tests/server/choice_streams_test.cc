// Tests for ChoiceStreams over bare ResponseStreams (no engine, no thread).
#include "server/choice_streams.h"

#include <gtest/gtest.h>

#include <memory>

namespace met {
namespace {

struct Choice {
  std::shared_ptr<ResponseStream> stream = std::make_shared<ResponseStream>();
  ResponseSink sink;
};

std::vector<RequestHandle> handles(std::vector<Choice>& choices) {
  std::vector<RequestHandle> out;
  for (size_t i = 0; i < choices.size(); ++i) {
    choices[i].sink = ResponseSink(RequestId(i + 1), choices[i].stream);
    out.emplace_back(RequestId(i + 1), choices[i].stream);
  }
  return out;
}

TEST(ChoiceStreams, HandsOverEveryChoicesEventsInOrderAndWakesForEach) {
  std::vector<Choice> choices(2);
  int wakes = 0;
  std::vector<size_t> observed;
  ChoiceStreams streams(handles(choices), [&] { ++wakes; },
                        [&](size_t i, const StreamEvent&) { observed.push_back(i); });
  choices[1].sink.delta(DeltaEvent{{1}, "b"});
  choices[0].sink.delta(DeltaEvent{{2}, "a"});
  choices[0].sink.finish(FinishEvent{"stop", std::nullopt, {}, 0, 0});
  EXPECT_EQ(wakes, 3);
  EXPECT_TRUE(streams.has_events());
  const std::vector<ChoiceEvent> events = streams.take();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].index, 0u);
  EXPECT_EQ(std::get<DeltaEvent>(events[0].event).text, "a");
  EXPECT_TRUE(is_terminal(events[1].event));
  EXPECT_EQ(events[2].index, 1u);
  EXPECT_EQ(observed, (std::vector<size_t>{0, 0, 1}));
  EXPECT_FALSE(streams.has_events());
  choices[1].sink.error("done");
}

TEST(ChoiceStreams, CancelSetsEveryChoicesCancelFlag) {
  std::vector<Choice> choices(2);
  ChoiceStreams streams(handles(choices), [] {}, nullptr);
  streams.cancel();
  EXPECT_TRUE(choices[0].sink.cancelled());
  EXPECT_TRUE(choices[1].sink.cancelled());
  for (Choice& c : choices) c.sink.error("cancelled");
}

TEST(ChoiceStreams, NoWakeRunsAfterTheyAreDestroyed) {
  std::vector<Choice> choices(1);
  int wakes = 0;
  {
    ChoiceStreams streams(handles(choices), [&] { ++wakes; }, nullptr);
  }
  choices[0].sink.delta(DeltaEvent{{1}, "late"});
  EXPECT_EQ(wakes, 0);
  EXPECT_TRUE(choices[0].sink.cancelled());  // leaving cancels the request
  choices[0].sink.error("cancelled");
}

}  // namespace
}  // namespace met
