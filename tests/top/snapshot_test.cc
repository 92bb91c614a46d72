// parse_snapshot on canned answers of /v1/requests: every field of the
// contract, nulls, unknown fields, and bodies that are not the object.
#include "top/snapshot.h"

#include <gtest/gtest.h>

#include "top_test_data.h"

namespace met::top {
namespace {

TEST(ParseSnapshot, ReadsTheEngineCountersAndIgnoresUnknownFields) {
  const Result<Snapshot> s = parse_snapshot(testing::kRequestsJson);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->now_ms, 1764851234567);
  EXPECT_EQ(s->engine.running, 1);
  EXPECT_EQ(s->engine.waiting, 1);
  EXPECT_EQ(s->engine.kv_blocks_in_use, 120);
  EXPECT_EQ(s->engine.kv_blocks_total, 2048);
  EXPECT_EQ(s->engine.cache_hit_tokens, 500);
  EXPECT_DOUBLE_EQ(s->engine.device_busy_ms, 12345.6);
  EXPECT_EQ(s->engine.uptime_ms, 99999);
}

TEST(ParseSnapshot, ReadsEachRequestWithNullTimesAsAbsent) {
  const Result<Snapshot> s = parse_snapshot(testing::kRequestsJson);
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->requests.size(), 3u);
  const RequestRow& r = s->requests[0];
  EXPECT_EQ(r.id, "17");
  EXPECT_EQ(r.tenant, "acme");
  EXPECT_EQ(r.state, "running");
  EXPECT_EQ(r.cached_tokens, 64);
  EXPECT_EQ(r.preemptions, 1);
  EXPECT_EQ(r.first_token_ms, 1764851230100);
  EXPECT_FALSE(r.finished_ms.has_value());
  EXPECT_TRUE(r.finish_reason.empty());
  ASSERT_EQ(r.timeline.size(), 5u);
  EXPECT_EQ(r.timeline[1].event, "admitted");
  EXPECT_EQ(r.timeline[1].detail, "cached_tokens 64");
  EXPECT_EQ(r.timeline[3].detail, "swap");
  EXPECT_FALSE(s->requests[1].admitted_ms.has_value());
  EXPECT_EQ(s->requests[2].finish_reason, "stop");
  EXPECT_EQ(s->requests[2].adapter, "lora-a");
}

TEST(ParseSnapshot, ReadsTenantTotals) {
  const Result<Snapshot> s = parse_snapshot(testing::kRequestsJson);
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->tenants.size(), 2u);
  EXPECT_EQ(s->tenants[0].tenant, "acme");
  EXPECT_EQ(s->tenants[0].requests, 10);
  EXPECT_EQ(s->tenants[1].cache_hit_tokens, 256);
}

TEST(ParseSnapshot, TakesAFailedRequestsErrorAsItsReason) {
  const Result<Snapshot> s = parse_snapshot(
      R"({"now_ms":5,"engine":{},"requests":[{"id":3,"state":"failed","error":"cancelled by an operator"}]})");
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->requests.size(), 1u);
  EXPECT_EQ(s->requests[0].id, "3") << "a numeric id is kept as its digits";
  EXPECT_EQ(s->requests[0].finish_reason, "cancelled by an operator");
  EXPECT_TRUE(s->tenants.empty());
}

TEST(ParseSnapshot, FieldsOfTheWrongTypeReadAsAbsent) {
  const Result<Snapshot> s =
      parse_snapshot(R"({"engine":{"running":"three"},"requests":[7,{"id":"1","queued_ms":"soon"}],"tenants":{}})");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->engine.running, 0);
  ASSERT_EQ(s->requests.size(), 1u);
  EXPECT_FALSE(s->requests[0].queued_ms.has_value());
}

TEST(ParseSnapshot, ABodyThatIsNotTheObjectIsAnError) {
  for (const char* body : {"", "not json", "[]", R"({"object":"list","data":[]})", R"({"engine":3})"}) {
    const Result<Snapshot> s = parse_snapshot(body);
    ASSERT_FALSE(s.ok()) << body;
    EXPECT_NE(s.status().message().find("/v1/requests"), std::string::npos) << s.status().message();
  }
}

}  // namespace
}  // namespace met::top
