// The operator routes' pure parts (server/operator_api.h): the cancel path,
// GET /v1/requests's JSON, a telemetry record's JSON, and who a request is
// accounted to.
#include "server/operator_api.h"

#include <gtest/gtest.h>

#include <string>

namespace met {
namespace {

TEST(OperatorApi, TheCancelPathNamesANumericId) {
  EXPECT_EQ(cancel_target("/v1/requests/17/cancel"), 17u);
  EXPECT_EQ(cancel_target("/v1/requests//cancel"), std::nullopt);
  EXPECT_EQ(cancel_target("/v1/requests/x7/cancel"), std::nullopt);
  EXPECT_EQ(cancel_target("/v1/requests/7"), std::nullopt);
  EXPECT_EQ(cancel_target("/v1/requests/99999999999999999999999/cancel"), std::nullopt);
  EXPECT_EQ(cancel_target("/v1/requests"), std::nullopt);
}

EngineView one_request_view() {
  EngineView v;
  v.now_ms = 5000;
  RequestView r;
  r.id = RequestId(3);
  r.tenant = "acme";
  r.state = RequestState::kRunning;
  r.prompt_tokens = 40;
  r.cached_tokens = 32;
  r.output_tokens = 7;
  r.kv_blocks = 3;
  r.queued_ms = 1000;
  r.admitted_ms = 1010;
  r.first_token_ms = 1100;
  r.timeline = {{"queued", 1000, 0, {}}, {"admitted", 1010, 32, {}}, {"first_token", 1100, 0, {}}};
  v.requests.push_back(r);
  TenantView t;
  t.tenant = "acme";
  t.requests = 1;
  t.running = 1;
  v.tenants.push_back(t);
  return v;
}

TEST(OperatorApi, TheRequestsBodyNamesEveryRequestWithItsTimesAndTimeline) {
  EngineStatsSnapshot s;
  s.num_running = 1;
  s.blocks_total = 100;
  s.blocks_in_use = 3;
  s.device_busy_ns = 2'500'000;
  const nlohmann::ordered_json j = engine_view_json(one_request_view(), s, 4000);
  EXPECT_EQ(j["object"], "engine.requests");
  EXPECT_EQ(j["now_ms"], 5000);
  EXPECT_EQ(j["engine"]["running"], 1);
  EXPECT_EQ(j["engine"]["kv_blocks_total"], 100);
  EXPECT_DOUBLE_EQ(j["engine"]["device_busy_ms"].get<double>(), 2.5);
  EXPECT_EQ(j["engine"]["uptime_ms"], 4000);
  const auto& r = j["requests"][0];
  EXPECT_EQ(r["id"], "3");
  EXPECT_EQ(r["tenant"], "acme");
  EXPECT_EQ(r["state"], "running");
  EXPECT_EQ(r["cached_tokens"], 32);
  EXPECT_EQ(r["first_token_ms"], 1100);
  EXPECT_TRUE(r["finished_ms"].is_null());
  EXPECT_TRUE(r["finish_reason"].is_null());
  EXPECT_EQ(r["timeline"].size(), 3u);
  EXPECT_EQ(r["timeline"][1]["event"], "admitted");
  EXPECT_EQ(r["timeline"][1]["cached_tokens"], 32);
  EXPECT_EQ(j["tenants"][0]["tenant"], "acme");
  EXPECT_EQ(j["tenants"][0]["running"], 1);
}

TEST(OperatorApi, ATelemetryRecordIsAStepOrARequestEventWithItsSequence) {
  StepTelemetry step;
  step.rows = 4;
  step.decode_tokens = 4;
  step.spills = 1;
  step.spill_bytes = 4096;
  const nlohmann::ordered_json s = telemetry_json(TelemetryRecord{9, 1234, step});
  EXPECT_EQ(s["type"], "step");
  EXPECT_EQ(s["seq"], 9);
  EXPECT_EQ(s["ms"], 1234);
  EXPECT_EQ(s["rows"], 4);
  EXPECT_EQ(s["spill_bytes"], 4096);
  RequestTelemetry r;
  r.event = "finished";
  r.id = RequestId(5);
  r.finish_reason = "length";
  r.guard = "kv_exhausted";
  const nlohmann::ordered_json e = telemetry_json(TelemetryRecord{10, 1235, r});
  EXPECT_EQ(e["type"], "request");
  EXPECT_EQ(e["event"], "finished");
  EXPECT_EQ(e["id"], "5");
  EXPECT_EQ(e["finish_reason"], "length");
  EXPECT_EQ(e["guard"], "kv_exhausted");
}

TEST(OperatorApi, ARequestIsAccountedToItsKeysTenantElseADigestOfItsSalt) {
  Result<ApiKeys> none = ApiKeys::create({}, "");
  ASSERT_TRUE(none.ok());
  HttpRequest req;
  EXPECT_EQ(request_tenant(*none, req, ""), "");
  const std::string salted = request_tenant(*none, req, "my secret salt");
  EXPECT_TRUE(salted.starts_with("salt-")) << salted;
  EXPECT_EQ(salted.find("secret"), std::string::npos);
  EXPECT_EQ(request_tenant(*none, req, "my secret salt"), salted) << "the same salt, the same tenant";
  EXPECT_NE(request_tenant(*none, req, "another salt"), salted);
}

}  // namespace
}  // namespace met
