// The operator's routes through `met serve` (a subprocess on a free loopback
// port, a small random-weight model from `met make-model`): GET /v1/requests
// lists a streaming request with its tenant while it runs, POST
// /v1/requests/{id}/cancel ends that client's stream with an error frame,
// GET /v1/telemetry streams each step and lifecycle event, and with
// --admin-key those routes take that key and no other; a telemetry stream
// left open does not hold up shutdown; --tenant-quota answers a tenant over
// its requests or KV blocks with 429 and Retry-After while others are
// served; /metrics has each tenant's totals.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "serve_test_support.h"
#include "testing/http_client.h"
#include "testing/temp_dir.h"

namespace met::serve_operator_test {
namespace {

using testing::body_json;
using testing::HttpConnection;
using testing::http_request;
using testing::serve_args;
using testing::ServeProcess;

constexpr const char* kLongStream =
    R"({"prompt": "Once", "max_tokens": 6000, "ignore_eos": true, "temperature": 0, "stream": true})";

std::optional<testing::HttpResponse> call(uint16_t port, const std::string& method, const std::string& path,
                                          const std::string& key, const std::string& body = "") {
  HttpConnection c(port);
  if (!c.send_all(http_request(method, path, body, {"Authorization: Bearer " + key}))) return std::nullopt;
  return c.read_response();
}

class ServeOperator : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = testing::make_small_model(dir_, "small.gguf", 512, "--ctx 8192");
    keys_ = dir_.file("keys");
    std::ofstream(keys_) << "sk-team team-a\nsk-b team-b\n";
  }
  testing::TempDir dir_;
  std::string model_;
  std::string keys_;
};

TEST_F(ServeOperator, ARunningStreamIsListedWithItsTenantAndCancelEndsItWithAnErrorFrame) {
  ServeProcess server(serve_args(model_, "--api-key-file " + keys_ + " --admin-key adm"));
  ASSERT_NE(server.port(), 0) << server.error();
  HttpConnection client(server.port());
  ASSERT_TRUE(client.send_all(http_request("POST", "/v1/completions", kLongStream, {"Authorization: Bearer sk-team"})));
  ASSERT_TRUE(client.read_until("data: "));
  const auto listed = call(server.port(), "GET", "/v1/requests", "adm");
  ASSERT_TRUE(listed.has_value());
  ASSERT_EQ(listed->status, 200) << listed->body;
  const nlohmann::json view = body_json(listed);
  std::string id;
  for (const auto& r : view["requests"]) {
    if (r["state"] == "running" || r["state"] == "prefill") id = r["id"].get<std::string>();
  }
  ASSERT_FALSE(id.empty()) << view.dump();
  EXPECT_EQ(view["engine"]["running"], 1);
  const auto& r = view["requests"][0];
  EXPECT_EQ(r["tenant"], "team-a");
  EXPECT_GT(r["prompt_tokens"].get<int>(), 0);
  EXPECT_GT(r["kv_blocks"].get<int>(), 0);
  EXPECT_EQ(view["tenants"][0]["tenant"], "team-a");
  EXPECT_EQ(view["tenants"][0]["running"], 1);

  const auto cancelled = call(server.port(), "POST", "/v1/requests/" + id + "/cancel", "adm");
  ASSERT_TRUE(cancelled.has_value());
  EXPECT_EQ(cancelled->status, 200) << cancelled->body;
  EXPECT_EQ(body_json(cancelled)["cancelled"], true);
  ASSERT_TRUE(client.read_until("data: [DONE]")) << client.raw().substr(0, 300);
  EXPECT_NE(client.raw().find("cancelled by an operator"), std::string::npos);
  const auto again = call(server.port(), "POST", "/v1/requests/" + id + "/cancel", "adm");
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->status, 404);
  const nlohmann::json after = body_json(call(server.port(), "GET", "/v1/requests", "adm"));
  ASSERT_FALSE(after["requests"].empty());
  EXPECT_EQ(after["requests"].back()["state"], "failed");
  EXPECT_EQ(after["requests"].back()["timeline"].back()["event"], "failed");
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
}

TEST_F(ServeOperator, WithAnAdminKeyTheOperatorRoutesTakeItAndNoOther) {
  ServeProcess server(serve_args(model_, "--api-key sk-user --admin-key adm"));
  ASSERT_NE(server.port(), 0) << server.error();
  for (const char* path : {"/v1/requests", "/v1/telemetry"}) {
    const auto user = call(server.port(), "GET", path, "sk-user");
    ASSERT_TRUE(user.has_value());
    EXPECT_EQ(user->status, 401) << path;
  }
  const auto cancel = call(server.port(), "POST", "/v1/requests/1/cancel", "sk-user");
  ASSERT_TRUE(cancel.has_value());
  EXPECT_EQ(cancel->status, 401);
  const auto admin = call(server.port(), "GET", "/v1/requests", "adm");
  ASSERT_TRUE(admin.has_value());
  EXPECT_EQ(admin->status, 200);
  const auto generate = call(server.port(), "POST", "/v1/completions", "adm", R"({"prompt": "a", "max_tokens": 2})");
  ASSERT_TRUE(generate.has_value());
  EXPECT_EQ(generate->status, 401) << "the admin key is not an API key";
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
}

TEST_F(ServeOperator, WithoutAnAdminKeyTheApiKeyOpensThem) {
  ServeProcess server(serve_args(model_, "--api-key sk-user"));
  ASSERT_NE(server.port(), 0) << server.error();
  const auto user = call(server.port(), "GET", "/v1/requests", "sk-user");
  ASSERT_TRUE(user.has_value());
  EXPECT_EQ(user->status, 200);
  const auto nobody = call(server.port(), "GET", "/v1/requests", "wrong");
  ASSERT_TRUE(nobody.has_value());
  EXPECT_EQ(nobody->status, 401);
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
}

TEST_F(ServeOperator, TheTelemetryStreamCarriesStepsAndARequestsLifecycle) {
  ServeProcess server(serve_args(model_));
  ASSERT_NE(server.port(), 0) << server.error();
  HttpConnection tel(server.port());
  ASSERT_TRUE(tel.send_all(http_request("GET", "/v1/telemetry")));
  ASSERT_TRUE(tel.read_until("text/event-stream"));
  // ignore_eos: a sampled story may end before 8 tokens (seen once in CI).
  const auto done = testing::http_call(server.port(), "POST", "/v1/completions",
                                       R"({"prompt": "Once", "max_tokens": 8, "ignore_eos": true,
                                           "cache_salt": "s1"})");
  ASSERT_TRUE(done.has_value());
  ASSERT_EQ(done->status, 200);
  ASSERT_TRUE(tel.read_until(R"("event":"finished")")) << tel.raw().substr(0, 500);
  std::vector<std::string> events;
  int steps = 0;
  int64_t decode = 0;
  for (const std::string& line : testing::sse_data(tel.raw().substr(tel.raw().find("\r\n\r\n")))) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object()) continue;
    if (j["type"] == "step") {
      ++steps;
      decode += j["decode_tokens"].get<int64_t>();
    } else if (j["type"] == "request") {
      events.push_back(j["event"].get<std::string>());
      EXPECT_TRUE(j["tenant"].get<std::string>().starts_with("salt-")) << line;
    }
  }
  EXPECT_EQ(events, (std::vector<std::string>{"queued", "admitted", "first_token", "finished"}));
  EXPECT_GE(steps, 2);
  EXPECT_GE(decode, 7) << tel.raw();
  // A stream still open does not hold up the server's shutdown.
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
}

// A streaming request of `key`'s that runs until cancelled, once its first event came.
std::unique_ptr<HttpConnection> long_stream(uint16_t port, const std::string& key) {
  auto c = std::make_unique<HttpConnection>(port);
  EXPECT_TRUE(c->send_all(http_request("POST", "/v1/completions", kLongStream, {"Authorization: Bearer " + key})));
  EXPECT_TRUE(c->read_until("data: "));
  return c;
}

constexpr const char* kShort = R"({"prompt": "Once", "max_tokens": 2})";

TEST_F(ServeOperator, ATenantOverItsRequestQuotaGets429WithRetryAfterWhileOthersAreServed) {
  ServeProcess server(serve_args(model_, "--api-key-file " + keys_ + " --tenant-quota team-a:requests=1"));
  ASSERT_NE(server.port(), 0) << server.error();
  std::unique_ptr<HttpConnection> first = long_stream(server.port(), "sk-team");
  const auto refused = call(server.port(), "POST", "/v1/completions", "sk-team", kShort);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->status, 429) << refused->body;
  EXPECT_EQ(refused->headers.at("retry-after"), "1");
  EXPECT_EQ(body_json(refused)["error"]["code"], "tenant_quota_exceeded");
  const auto other = call(server.port(), "POST", "/v1/completions", "sk-b", kShort);
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(other->status, 200) << "another tenant is not held back";
  first.reset();  // the client leaves: its request ends and gives its slot back
  int status = 0;
  for (int i = 0; i < 200 && status != 200; ++i) {
    const auto again = call(server.port(), "POST", "/v1/completions", "sk-team", kShort);
    status = again.has_value() ? again->status : 0;
    if (status != 200) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(status, 200);
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
}

TEST_F(ServeOperator, ATenantHoldingItsKvBlocksQuotaGets429) {
  ServeProcess server(serve_args(model_, "--api-key-file " + keys_ + " --tenant-quota team-a:kv_blocks=3"));
  ASSERT_NE(server.port(), 0) << server.error();
  std::unique_ptr<HttpConnection> first = long_stream(server.port(), "sk-team");
  int status = 0;
  std::string body;
  for (int i = 0; i < 200 && status != 429; ++i) {  // its blocks grow with its output
    const auto r = call(server.port(), "POST", "/v1/completions", "sk-team", kShort);
    status = r.has_value() ? r->status : 0;
    body = r.has_value() ? r->body : "";
  }
  EXPECT_EQ(status, 429);
  EXPECT_NE(body.find("KV cache blocks"), std::string::npos) << body;
  const auto other = call(server.port(), "POST", "/v1/completions", "sk-b", kShort);
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(other->status, 200);
  first.reset();
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
}

TEST_F(ServeOperator, MetricsCountEachTenantsRequestsAndTokens) {
  ServeProcess server(serve_args(model_, "--api-key-file " + keys_));
  ASSERT_NE(server.port(), 0) << server.error();
  for (int i = 0; i < 3; ++i) ASSERT_EQ(call(server.port(), "POST", "/v1/completions", "sk-team", kShort)->status, 200);
  ASSERT_EQ(call(server.port(), "POST", "/v1/completions", "sk-b", kShort)->status, 200);
  const auto metrics = testing::http_call(server.port(), "GET", "/metrics");
  ASSERT_TRUE(metrics.has_value());
  const std::string& text = metrics->body;
  EXPECT_NE(text.find(R"(met:tenant_requests_total{model_name="small",tenant="team-a"} 3)"), std::string::npos)
      << text;
  EXPECT_NE(text.find(R"(met:tenant_requests_total{model_name="small",tenant="team-b"} 1)"), std::string::npos);
  EXPECT_NE(text.find(R"(met:tenant_generation_tokens_total{model_name="small",tenant="team-a"} 6)"),
            std::string::npos);
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
}

}  // namespace
}  // namespace met::serve_operator_test
