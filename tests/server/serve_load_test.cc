// A bounded load test of `met serve` (stories260K): 64 concurrent streaming
// clients, each of whose streams must be complete and well formed (role
// first, text chunks, one finish_reason, a usage chunk with the right
// counts, then [DONE]), while one client reads nothing for a while and
// another disconnects mid-stream. Afterwards nothing runs or waits and every
// KV block is back (met:kv_cache_blocks_used is 0). Timing is never asserted.
#include <gtest/gtest.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "server/prometheus_text.h"
#include "testing/http_client.h"
#include "testing/run_command.h"
#include "testing/shared_data.h"

namespace met {
namespace {

using Json = nlohmann::json;
using testing::http_call;
using testing::http_request;
using testing::HttpConnection;
using testing::HttpResponse;
using testing::ServeProcess;
using testing::sse_data;

constexpr int kClients = 64;
constexpr int kRequestsPerClient = 2;
constexpr int kMaxTokens = 32;

std::string stream_body(int seed, int max_tokens) {
  Json j = {{"prompt", "Once upon a time"}, {"max_tokens", max_tokens}, {"ignore_eos", true},
            {"temperature", 0.8},          {"seed", seed},              {"stream", true},
            {"stream_options", {{"include_usage", true}}}};
  return j.dump();
}

// "" when `r` is a complete, well-formed completion stream of `max_tokens`
// tokens; else what is wrong with it.
std::string stream_problem(const std::optional<HttpResponse>& r, int max_tokens) {
  if (!r) return "no response";
  if (r->status != 200) return "status " + std::to_string(r->status) + ": " + r->body;
  const std::vector<std::string> events = sse_data(r->body);
  if (events.size() < 3 || events.back() != "[DONE]") return "no [DONE] at the end";
  int finishes = 0;
  for (size_t i = 0; i + 2 < events.size(); ++i) {
    const Json j = Json::parse(events[i], nullptr, false);
    if (j.is_discarded() || j["object"] != "text_completion" || j["choices"].size() != 1) {
      return "bad chunk " + events[i];
    }
    if (!j["choices"][0]["finish_reason"].is_null()) ++finishes;
  }
  if (finishes != 1) return "finish_reason seen " + std::to_string(finishes) + " times";
  const Json usage = Json::parse(events[events.size() - 2], nullptr, false)["usage"];
  if (!usage.is_object() || usage["completion_tokens"] != max_tokens ||
      usage["total_tokens"] != usage["prompt_tokens"].get<int>() + max_tokens) {
    return "bad usage chunk " + events[events.size() - 2];
  }
  return "";
}

TEST(MetServeLoad, SixtyFourStreamingClientsAreServedBesideASlowReaderAndADeserter) {
  MET_REQUIRE_SHARED(model, "models/stories260K.gguf");
  ServeProcess server(testing::shell_quote(model) + " --port 0 --threads 2 --max-seqs 64");
  ASSERT_NE(server.port(), 0) << server.error();

  // The slow reader: asks for a long stream, then reads nothing until the
  // others are done.
  HttpConnection slow(server.port());
  ASSERT_TRUE(slow.send_all(http_request("POST", "/v1/completions", stream_body(1000, 400))));
  // The deserter: leaves after its first event.
  {
    HttpConnection deserter(server.port());
    ASSERT_TRUE(deserter.send_all(http_request("POST", "/v1/completions", stream_body(1001, 400))));
    ASSERT_TRUE(deserter.read_until("data: "));
  }

  std::vector<std::string> problems(kClients * kRequestsPerClient);
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&, i] {
      for (int k = 0; k < kRequestsPerClient; ++k) {
        const int n = i * kRequestsPerClient + k;
        problems[n] = stream_problem(http_call(server.port(), "POST", "/v1/completions", stream_body(n, kMaxTokens)),
                                     kMaxTokens);
      }
    });
  }
  for (std::thread& t : clients) t.join();
  for (size_t n = 0; n < problems.size(); ++n) EXPECT_EQ(problems[n], "") << "request " << n;

  // Now the slow reader reads its whole stream.
  auto slow_response = slow.read_response();
  EXPECT_EQ(stream_problem(slow_response, 400), "");

  // Idle again: nothing running or waiting, and every block back in the pool.
  testing::PrometheusText m;
  for (int i = 0; i < 200; ++i) {
    auto r = http_call(server.port(), "GET", "/metrics");
    ASSERT_TRUE(r.has_value());
    m = testing::parse_prometheus_text(r->body);
    ASSERT_EQ(m.error, "");
    if (m.value("met:num_requests_running") == 0 && m.value("met:kv_cache_blocks_used") == 0) break;
  }
  EXPECT_EQ(m.value("met:num_requests_running"), 0);
  EXPECT_EQ(m.value("met:num_requests_waiting"), 0);
  EXPECT_EQ(m.value("met:kv_cache_blocks_used"), 0);
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
}

}  // namespace
}  // namespace met
