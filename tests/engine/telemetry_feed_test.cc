// TelemetryFeed: records in order from a subscriber's own cursor, the loss
// of a reader that fell more than the ring behind, nothing staged without
// subscribers.
#include "engine/telemetry_feed.h"

#include <gtest/gtest.h>

#include <vector>

namespace met {
namespace {

StepTelemetry step(int32_t rows) {
  StepTelemetry s;
  s.rows = rows;
  return s;
}

TEST(TelemetryFeed, ASubscriberReadsTheRecordsStagedAfterItSubscribedInOrder) {
  TelemetryFeed feed(16);
  EXPECT_FALSE(feed.has_subscribers());
  TelemetryFeed::Subscription sub = feed.subscribe();
  EXPECT_TRUE(feed.has_subscribers());
  for (int i = 1; i <= 5; ++i) feed.stage(100 + i, step(i));
  std::vector<TelemetryRecord> out;
  EXPECT_EQ(sub.read(out, 100), 0u);
  EXPECT_TRUE(out.empty()) << "nothing is handed over before the tick's flush";
  feed.flush();
  EXPECT_EQ(sub.read(out, 3), 0u);
  EXPECT_EQ(sub.read(out, 100), 0u);
  ASSERT_EQ(out.size(), 5u);
  for (size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i].seq, i + 1);
    EXPECT_EQ(out[i].unix_ms, static_cast<int64_t>(101 + i));
    EXPECT_EQ(std::get<StepTelemetry>(out[i].what).rows, static_cast<int32_t>(i + 1));
  }
}

TEST(TelemetryFeed, AReaderThatFellBehindTheRingIsToldHowManyItLost) {
  TelemetryFeed feed(4);
  TelemetryFeed::Subscription sub = feed.subscribe();
  for (int i = 1; i <= 10; ++i) feed.stage(i, step(i));
  feed.flush();
  std::vector<TelemetryRecord> out;
  EXPECT_EQ(sub.read(out, 100), 6u);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out.front().seq, 7u);
  EXPECT_EQ(out.back().seq, 10u);
}

TEST(TelemetryFeed, ALateSubscriberStartsAtTheNextRecordAndUnsubscribesWhenDestroyed) {
  TelemetryFeed feed(8);
  {
    TelemetryFeed::Subscription first = feed.subscribe();
    feed.stage(1, step(1));
    feed.flush();
    TelemetryFeed::Subscription late = feed.subscribe();
    RequestTelemetry r;
    r.event = "queued";
    r.tenant = "acme";
    feed.stage(2, r);
    feed.flush();
    std::vector<TelemetryRecord> out;
    late.read(out, 10);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].seq, 2u);
    EXPECT_EQ(std::get<RequestTelemetry>(out[0].what).tenant, "acme");
  }
  EXPECT_FALSE(feed.has_subscribers());
}

}  // namespace
}  // namespace met
