// Tests for `met serve`'s operational endpoints and flags, run as a
// subprocess on a free loopback port: /metrics, API keys, /tokenize and
// /detokenize, /health, --request-timeout and --drain-timeout, and the
// details OpenAI clients read (routes without /v1, system_fingerprint,
// refusal, context_length_exceeded), CORS, and the chat page at /. Timing is
// never asserted.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "server/chat_page.h"
#include "server/generation.h"
#include "server/prometheus_text.h"
#include "serve_test_support.h"
#include "testing/http_client.h"
#include "testing/run_command.h"
#include "testing/shared_data.h"
#include "testing/temp_dir.h"

namespace met {
namespace {

using PlainJson = nlohmann::json;
using testing::http_call;
using testing::http_request;
using testing::HttpConnection;
using testing::HttpResponse;
using testing::body_json;
using testing::serve_args;
using testing::ServeProcess;

// One request on a fresh connection with extra header lines.
std::optional<HttpResponse> call_with(uint16_t port, const std::string& method, const std::string& path,
                                      const std::string& body, const std::vector<std::string>& headers) {
  HttpConnection c(port);
  if (!c.send_all(http_request(method, path, body, headers))) return std::nullopt;
  return c.read_response();
}

testing::PrometheusText scrape(uint16_t port) {
  auto r = http_call(port, "GET", "/metrics");
  EXPECT_TRUE(r.has_value());
  if (!r) return {};
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->headers["content-type"].rfind("text/plain; version=0.0.4", 0), 0u) << r->headers["content-type"];
  testing::PrometheusText t = testing::parse_prometheus_text(r->body);
  EXPECT_EQ(t.error, "") << r->body;
  return t;
}

// The engine counts a finished request just after its finish frame is sent:
// scrape until the counter reaches `want` (a bounded number of tries).
double scrape_until(uint16_t port, const std::string& name, double want) {
  double v = -1;
  for (int i = 0; i < 200 && v < want; ++i) v = scrape(port).value(name).value_or(-1);
  return v;
}

TEST(MetServeMetrics, TheTextParsesAndItsCountersMoveAfterRequests) {
  MET_REQUIRE_SHARED(model, "models/stories260K.gguf");
  ServeProcess server(serve_args(model, "--model-alias stories"));
  ASSERT_NE(server.port(), 0) << server.error();
  const testing::PrometheusText before = scrape(server.port());
  EXPECT_EQ(before.types.at("met:time_to_first_token_seconds"), "histogram");
  EXPECT_EQ(before.value("met:generation_tokens_total"), 0);
  EXPECT_EQ(before.value("met:num_requests_running"), 0);
  EXPECT_GT(*before.value("met:kv_cache_blocks_total"), 0);
  int completion_tokens = 0;
  int prompt_tokens = 0;
  for (const char* stream : {"false", "true"}) {
    const std::string body = std::string(R"({"prompt": "Once upon a time", "max_tokens": 12, "ignore_eos": true,
        "stream_options": {"include_usage": true}, "stream": )") + stream + "}";
    auto r = http_call(server.port(), "POST", "/v1/completions", body);
    ASSERT_TRUE(r.has_value());
    ASSERT_EQ(r->status, 200) << r->body;
    completion_tokens += 12;
  }
  auto tok = http_call(server.port(), "POST", "/tokenize", R"({"prompt": "Once upon a time"})");
  prompt_tokens = 2 * body_json(tok)["count"].get<int>();
  EXPECT_EQ(scrape_until(server.port(), "met:generation_tokens_total", completion_tokens), completion_tokens);
  const testing::PrometheusText after = scrape(server.port());
  EXPECT_EQ(after.value("met:prompt_tokens_total"), prompt_tokens);
  EXPECT_EQ(after.value("met:time_to_first_token_seconds_count"), 2);
  EXPECT_EQ(after.value("met:e2e_request_latency_seconds_count"), 2);
  EXPECT_EQ(after.value("met:inter_token_latency_seconds_count"), 2 * 11);
  EXPECT_EQ(after.samples.at("met:request_success_total{finished_reason=\"length\",model_name=\"stories\"}"), 2);
  EXPECT_GT(*after.value("met:prefix_cache_queries_total"), 0);
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
}

TEST(MetServeApiKeys, RequestsWithoutAMatchingBearerKeyGet401ButHealthAndMetricsStayOpen) {
  MET_REQUIRE_SHARED(model, "models/stories260K.gguf");
  testing::TempDir dir;
  const std::string key_file = dir.file("keys");
  std::ofstream(key_file) << "sk-from-file\n";
  ServeProcess server(serve_args(model, "--api-key sk-one --api-key sk-two --api-key-file " + key_file));
  ASSERT_NE(server.port(), 0) << server.error();
  const std::string body = R"({"prompt": "Once", "max_tokens": 2})";
  for (const std::vector<std::string>& headers : std::vector<std::vector<std::string>>{
           {}, {"Authorization: Bearer sk-wrong"}, {"Authorization: sk-one"}, {"Authorization: Bearer sk-on"}}) {
    auto r = call_with(server.port(), "POST", "/v1/completions", body, headers);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 401) << (headers.empty() ? "no header" : headers[0]);
    EXPECT_EQ(body_json(r)["error"]["code"], "invalid_api_key") << r->body;
    EXPECT_EQ(body_json(r)["error"]["type"], "invalid_request_error") << r->body;
    EXPECT_EQ(r->headers["www-authenticate"], "Bearer");
  }
  for (const char* key : {"sk-one", "sk-two", "sk-from-file"}) {
    auto r = call_with(server.port(), "POST", "/v1/completions", body, {std::string("Authorization: Bearer ") + key});
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 200) << key << ": " << r->body;
  }
  EXPECT_EQ(call_with(server.port(), "POST", "/tokenize", R"({"prompt": "a"})", {})->status, 401);
  EXPECT_EQ(call_with(server.port(), "GET", "/v1/models", "", {})->status, 401);
  EXPECT_EQ(http_call(server.port(), "GET", "/health")->status, 200);
  EXPECT_EQ(http_call(server.port(), "GET", "/metrics")->status, 200);
}

TEST(MetServeTokenize, TokenizeCountsWhatACompletionReportsAndDetokenizeGivesTheTextBack) {
  MET_REQUIRE_SHARED(model, "models/stories260K.gguf");
  ServeProcess server(serve_args(model));
  ASSERT_NE(server.port(), 0) << server.error();
  const char* prompt = "Once upon a time, there was a little girl";
  auto t = http_call(server.port(), "POST", "/tokenize", PlainJson{{"prompt", prompt}}.dump());
  ASSERT_TRUE(t.has_value());
  ASSERT_EQ(t->status, 200) << t->body;
  const PlainJson tj = body_json(t);
  EXPECT_EQ(tj["count"].get<size_t>(), tj["tokens"].size());
  EXPECT_GT(tj["max_model_len"].get<int>(), 0);
  auto c = http_call(server.port(), "POST", "/v1/completions", PlainJson{{"prompt", prompt}, {"max_tokens", 1}}.dump());
  EXPECT_EQ(body_json(c)["usage"]["prompt_tokens"], tj["count"]);
  auto plain = http_call(server.port(), "POST", "/tokenize",
                         PlainJson{{"prompt", prompt}, {"add_special_tokens", false}}.dump());
  auto d = http_call(server.port(), "POST", "/detokenize", PlainJson{{"tokens", body_json(plain)["tokens"]}}.dump());
  ASSERT_EQ(d->status, 200) << d->body;
  EXPECT_EQ(body_json(d)["prompt"], prompt);
  auto bad = http_call(server.port(), "POST", "/detokenize", R"({"tokens": [1, 100000]})");
  EXPECT_EQ(bad->status, 400);
  EXPECT_EQ(body_json(bad)["error"]["param"], "tokens");
  EXPECT_NE(body_json(bad)["error"]["message"].get<std::string>().find("tokens[1] = 100000"), std::string::npos);
  EXPECT_EQ(http_call(server.port(), "GET", "/tokenize")->status, 405);
  EXPECT_EQ(http_call(server.port(), "POST", "/tokenize", "{")->status, 400);
}

TEST(MetServeOpenAiDetails, TheRoutesAnswerWithoutTheV1PrefixToo) {
  MET_REQUIRE_SHARED(model, "models/stories260K.gguf");
  ServeProcess server(serve_args(model, "--model-alias stories"));
  ASSERT_NE(server.port(), 0) << server.error();
  auto models = http_call(server.port(), "GET", "/models");
  ASSERT_EQ(models->status, 200) << models->body;
  EXPECT_EQ(body_json(models)["data"][0]["id"], "stories");
  auto c = http_call(server.port(), "POST", "/completions", R"({"prompt": "Once", "max_tokens": 2})");
  ASSERT_EQ(c->status, 200) << c->body;
  EXPECT_EQ(body_json(c)["object"], "text_completion");
  EXPECT_EQ(http_call(server.port(), "GET", "/completions")->status, 405);
}

TEST(MetServeOpenAiDetails, EveryResponseAndChunkCarriesOneSystemFingerprintAndMessagesARefusalOfNull) {
  testing::TempDir dir;
  const std::string model = testing::make_small_model(dir, "chat.gguf", 512);
  ServeProcess server(serve_args(model));
  ASSERT_NE(server.port(), 0) << server.error();
  const std::string body = R"({"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 3)";
  auto plain = http_call(server.port(), "POST", "/chat/completions", body + "}");
  ASSERT_EQ(plain->status, 200) << plain->body;
  const PlainJson pj = body_json(plain);
  ASSERT_TRUE(pj["system_fingerprint"].is_string()) << pj.dump();
  const std::string fingerprint = pj["system_fingerprint"];
  EXPECT_FALSE(fingerprint.empty());
  ASSERT_TRUE(pj["choices"][0]["message"].contains("refusal")) << pj.dump();
  EXPECT_TRUE(pj["choices"][0]["message"]["refusal"].is_null());
  auto streamed = http_call(server.port(), "POST", "/v1/chat/completions", body + R"(, "stream": true})");
  ASSERT_EQ(streamed->status, 200) << streamed->body;
  int chunks = 0;
  for (const std::string& data : testing::sse_data(streamed->body)) {
    if (data == "[DONE]") continue;
    const PlainJson chunk = PlainJson::parse(data);
    EXPECT_EQ(chunk["system_fingerprint"], fingerprint) << data;
    ++chunks;
  }
  EXPECT_GE(chunks, 2);
  auto completion = http_call(server.port(), "POST", "/v1/completions", R"({"prompt": "Hi", "max_tokens": 2})");
  EXPECT_EQ(body_json(completion)["system_fingerprint"], fingerprint);
}

TEST(MetServeOpenAiDetails, APromptOverTheContextIsA400WithContextLengthExceeded) {
  MET_REQUIRE_SHARED(model, "models/stories260K.gguf");
  ServeProcess server(serve_args(model));
  ASSERT_NE(server.port(), 0) << server.error();
  PlainJson ids = PlainJson::array();
  for (int i = 0; i < 2100; ++i) ids.push_back(100 + i % 50);  // stories260K's context is 2048
  auto r = http_call(server.port(), "POST", "/v1/completions", PlainJson{{"prompt", ids}, {"max_tokens", 1}}.dump());
  ASSERT_EQ(r->status, 400) << r->body;
  const PlainJson e = body_json(r)["error"];
  EXPECT_EQ(e["code"], "context_length_exceeded") << r->body;
  EXPECT_EQ(e["type"], "invalid_request_error");
  EXPECT_TRUE(e["param"].is_null());  // as OpenAI's completions answer; chat names "messages"
  EXPECT_NE(e["message"].get<std::string>().find("2100 tokens"), std::string::npos) << r->body;
}

TEST(MetServeCors, APreflightNeedsNoKeyAndEveryAnswerToAListedOriginSaysItMayRead) {
  MET_REQUIRE_SHARED(model, "models/stories260K.gguf");
  ServeProcess server(serve_args(model, "--api-key sk-cors --cors-origins http://app.example,http://other.example"));
  ASSERT_NE(server.port(), 0) << server.error();
  const std::string origin = "Origin: http://app.example";
  auto pre = call_with(server.port(), "OPTIONS", "/v1/chat/completions", "",
                       {origin, "Access-Control-Request-Method: POST",
                        "Access-Control-Request-Headers: authorization, content-type"});
  ASSERT_TRUE(pre.has_value());
  EXPECT_EQ(pre->status, 204);
  EXPECT_EQ(pre->headers["access-control-allow-origin"], "http://app.example");
  for (const char* h : {"Authorization", "x-api-key", "Content-Type"}) {
    EXPECT_NE(pre->headers["access-control-allow-headers"].find(h), std::string::npos) << h;
  }
  const std::string body = R"({"prompt": "Once", "max_tokens": 2)";
  for (const char* stream : {"}", R"(, "stream": true})"}) {
    auto r =
        call_with(server.port(), "POST", "/v1/completions", body + stream, {origin, "Authorization: Bearer sk-cors"});
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 200) << r->body;
    EXPECT_EQ(r->headers["access-control-allow-origin"], "http://app.example") << stream;
  }
  auto unauthorized = call_with(server.port(), "POST", "/v1/completions", body + "}", {origin});
  EXPECT_EQ(unauthorized->status, 401);  // the key still guards everything but the preflight
  EXPECT_EQ(unauthorized->headers["access-control-allow-origin"], "http://app.example");
  auto stranger = call_with(server.port(), "POST", "/v1/completions", body + "}",
                            {"Origin: http://evil.example", "Authorization: Bearer sk-cors"});
  EXPECT_EQ(stranger->status, 200);
  EXPECT_EQ(stranger->headers.count("access-control-allow-origin"), 0u);
  auto stranger_pre = call_with(server.port(), "OPTIONS", "/v1/completions", "",
                                {"Origin: http://evil.example", "Access-Control-Request-Method: POST"});
  EXPECT_NE(stranger_pre->status, 204);
}

TEST(MetServeChatPage, TheRootServesThePageWithNoKeyWhileTheApiStillNeedsOne) {
  MET_REQUIRE_SHARED(model, "models/stories260K.gguf");
  ServeProcess server(serve_args(model, "--api-key sk-page"));
  ASSERT_NE(server.port(), 0) << server.error();
  for (const char* path : {"/", "/index.html", "/?chat=1"}) {
    auto r = http_call(server.port(), "GET", path);
    ASSERT_TRUE(r.has_value()) << path;
    EXPECT_EQ(r->status, 200) << path << ": " << r->body.substr(0, 200);
    EXPECT_EQ(r->headers["content-type"], "text/html; charset=utf-8") << path;
    EXPECT_EQ(r->body, chat_page_html()) << path;
    EXPECT_NE(r->headers["content-security-policy"].find("connect-src 'self'"), std::string::npos);
  }
  EXPECT_EQ(call_with(server.port(), "GET", "/v1/models", "", {})->status, 401);
  EXPECT_EQ(call_with(server.port(), "GET", "/v1/models", "", {"Authorization: Bearer sk-page"})->status, 200);
  auto post = call_with(server.port(), "POST", "/", "", {"Authorization: Bearer sk-page"});
  ASSERT_TRUE(post.has_value());
  EXPECT_EQ(post->status, 405);
  EXPECT_EQ(post->headers["allow"], "GET");
  EXPECT_EQ(http_call(server.port(), "GET", "/chat.html")->status, 401);  // not the page: the key guards it
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
}

TEST(MetServeHealth, AServingEngineIsHealthyWithAStallTimeout) {
  MET_REQUIRE_SHARED(model, "models/stories260K.gguf");
  ServeProcess server(serve_args(model, "--stall-timeout 30"));
  ASSERT_NE(server.port(), 0) << server.error();
  ASSERT_EQ(http_call(server.port(), "POST", "/v1/completions", R"({"prompt": "a", "max_tokens": 4})")->status, 200);
  auto h = http_call(server.port(), "GET", "/health");
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->status, 200);
  EXPECT_EQ(body_json(h)["status"], "ok");
  EXPECT_EQ(http_call(server.port(), "POST", "/health")->status, 405);
}

TEST(RequestTimeout, TheSmallerOfTheRequestsOwnAndTheDefaultWins) {
  using std::chrono::seconds;
  EXPECT_EQ(effective_timeout(std::nullopt, std::nullopt), std::nullopt);
  EXPECT_EQ(effective_timeout(seconds(5), std::nullopt), Duration(seconds(5)));
  EXPECT_EQ(effective_timeout(std::nullopt, seconds(7)), Duration(seconds(7)));
  EXPECT_EQ(effective_timeout(seconds(5), seconds(7)), Duration(seconds(5)));
  EXPECT_EQ(effective_timeout(seconds(9), seconds(7)), Duration(seconds(7)));
}

// A context long enough that a request can outlast a deadline.
constexpr char kLongContext[] = "--ctx 8192";

TEST(MetServeTimeouts, TheDefaultRequestTimeoutEndsALongRequestWithTimeout) {
  testing::TempDir dir;
  const std::string model = testing::make_small_model(dir, "long.gguf", 600, kLongContext);
  ServeProcess server(serve_args(model, "--request-timeout 0.001"));
  ASSERT_NE(server.port(), 0) << server.error();
  auto r = http_call(server.port(), "POST", "/v1/completions",
                     R"({"prompt": "hi", "max_tokens": 8000, "ignore_eos": true})");
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(body_json(r)["choices"][0]["finish_reason"], "timeout");
}

TEST(MetServeTimeouts, PastTheDrainTimeoutARunningStreamEndsWithAnErrorEventThenDoneAndTheExitIsZero) {
  testing::TempDir dir;
  const std::string model = testing::make_small_model(dir, "long.gguf", 600, kLongContext);
  ServeProcess server(serve_args(model, "--drain-timeout 0.05"));
  ASSERT_NE(server.port(), 0) << server.error();
  HttpConnection c(server.port());
  ASSERT_TRUE(c.send_all(http_request(
      "POST", "/v1/completions", R"({"prompt": "hi", "max_tokens": 8000, "ignore_eos": true, "stream": true})")));
  ASSERT_TRUE(c.read_until("data: "));
  server.terminate();
  EXPECT_TRUE(c.read_until("data: [DONE]")) << c.raw().substr(0, 300);
  EXPECT_NE(c.raw().find("\"error\""), std::string::npos) << c.raw().substr(c.raw().size() - 400);
  EXPECT_EQ(server.wait(), 0) << server.stderr_text();
}

}  // namespace
}  // namespace met
