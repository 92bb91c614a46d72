// Tests for `met serve` (HttpServer), run as a subprocess on a free loopback
// port and driven with raw HTTP over real sockets. Timing is never asserted.
#include "server/http_server.h"

#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

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
using testing::ServeProcess;
using testing::body_json;
using testing::serve_args;
using testing::sse_data;

constexpr char kLily[] = "Once upon a time, there was a little girl named Lily";
constexpr char kGreedy20[] = R"({"prompt": "", "max_tokens": 20, "temperature": 0})";

// The text of a streamed completion; fails unless it ends with [DONE].
std::string streamed_text(const HttpResponse& r, PlainJson* usage = nullptr) {
  const std::vector<std::string> events = sse_data(r.body);
  EXPECT_FALSE(events.empty());
  if (events.empty()) return "";
  EXPECT_EQ(events.back(), "[DONE]");
  std::string text;
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    const PlainJson j = PlainJson::parse(events[i]);
    if (j.contains("usage") && !j["usage"].is_null() && usage != nullptr) *usage = j["usage"];
    if (j["choices"].empty()) continue;
    const PlainJson& c = j["choices"][0];
    if (c.contains("text")) text += c["text"].get<std::string>();
    if (c.contains("delta") && c["delta"].contains("content")) text += c["delta"]["content"].get<std::string>();
  }
  return text;
}

void expect_usage_consistent(const PlainJson& u) {
  ASSERT_TRUE(u.is_object()) << u;
  EXPECT_GE(u["prompt_tokens"].get<int>(), 1);
  EXPECT_EQ(u["total_tokens"].get<int>(), u["prompt_tokens"].get<int>() + u["completion_tokens"].get<int>());
  EXPECT_LE(u["prompt_tokens_details"]["cached_tokens"].get<int>(), u["prompt_tokens"].get<int>());
  EXPECT_EQ(u["completion_tokens_details"]["reasoning_tokens"], 0);
  EXPECT_EQ(u["completion_tokens_details"]["accepted_prediction_tokens"], 0);
}

TEST(MetServe, GreedyCompletionOfTheEmptyPromptIsTheKnownText) {
  MET_REQUIRE_SHARED(model, "models/stories260K.gguf");
  ServeProcess server(serve_args(model));
  ASSERT_NE(server.port(), 0) << server.error();
  auto r = http_call(server.port(), "POST", "/v1/completions", kGreedy20);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->headers["content-type"], "application/json");
  const PlainJson j = body_json(r);
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["id"].get<std::string>().rfind("cmpl-", 0), 0u) << j;
  EXPECT_EQ(j["model"], "stories260K");
  EXPECT_TRUE(j["created"].is_number_integer());
  EXPECT_EQ(j["choices"][0]["index"], 0);
  EXPECT_EQ(j["choices"][0]["text"].get<std::string>().rfind(kLily, 0), 0u) << j;
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_TRUE(j["choices"][0]["logprobs"].is_null());
  expect_usage_consistent(j["usage"]);
  EXPECT_EQ(j["usage"]["completion_tokens"], 20);
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
}

TEST(MetServe, AStreamedCompletionHasTheSameTextAndEndsWithDone) {
  MET_REQUIRE_SHARED(model, "models/stories260K.gguf");
  ServeProcess server(serve_args(model));
  ASSERT_NE(server.port(), 0) << server.error();
  auto whole = http_call(server.port(), "POST", "/v1/completions", kGreedy20);
  auto streamed = http_call(server.port(), "POST", "/v1/completions",
                            R"({"prompt": "", "max_tokens": 20, "temperature": 0, "stream": true,
                                "stream_options": {"include_usage": true}})");
  ASSERT_TRUE(whole && streamed);
  ASSERT_EQ(streamed->status, 200) << streamed->body;
  EXPECT_EQ(streamed->headers["content-type"], "text/event-stream");
  EXPECT_EQ(streamed->headers["transfer-encoding"], "chunked");
  EXPECT_GT(sse_data(streamed->body).size(), 3u);  // the text came in several chunks
  PlainJson usage;
  EXPECT_EQ(streamed_text(*streamed, &usage), body_json(whole)["choices"][0]["text"].get<std::string>());
  expect_usage_consistent(usage);
  EXPECT_EQ(usage["completion_tokens"], 20);
  const std::vector<std::string> events = sse_data(streamed->body);
  const PlainJson last_choice = PlainJson::parse(events[events.size() - 3]);  // before the usage chunk and [DONE]
  EXPECT_EQ(last_choice["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(last_choice["object"], "text_completion");
}

TEST(MetServe, TwoRequestsShareOneKeepAliveConnection) {
  MET_REQUIRE_SHARED(model, "models/stories260K.gguf");
  ServeProcess server(serve_args(model));
  ASSERT_NE(server.port(), 0) << server.error();
  HttpConnection c(server.port());
  ASSERT_TRUE(c.send_all(http_request("POST", "/v1/completions", kGreedy20)));
  auto first = c.read_response();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->status, 200);
  ASSERT_TRUE(c.send_all(http_request("POST", "/v1/completions",
                                      R"({"prompt": "", "max_tokens": 20, "temperature": 0, "stream": true})")));
  auto second = c.read_response();
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->status, 200);
  EXPECT_EQ(streamed_text(*second), body_json(first)["choices"][0]["text"].get<std::string>());
}

struct BadCase {
  const char* method;
  const char* path;
  std::string body;
  int status;
  std::optional<std::string> param;
};

TEST(MetServe, BadInputGetsItsStatusAndAnOpenAiErrorBody) {
  MET_REQUIRE_SHARED(model, "models/stories260K.gguf");
  ServeProcess server(serve_args(model, "--max-body-bytes 8192"));
  ASSERT_NE(server.port(), 0) << server.error();
  std::string long_prompt;
  for (int i = 0; i < 2100; ++i) long_prompt += "a ";
  const BadCase cases[] = {
      {"POST", "/v1/completions", "{\"prompt\": ", 400, std::nullopt},
      {"POST", "/v1/completions", "[1, 2]", 400, std::nullopt},
      {"POST", "/v1/completions", R"({"prompt": "", "max_tokens": "ten"})", 400, "max_tokens"},
      {"POST", "/v1/completions", R"({"prompt": "", "temperature": 9})", 400, "temperature"},
      {"POST", "/v1/completions", R"({"prompt": "", "top_p": 0})", 400, "top_p"},
      {"POST", "/v1/completions", R"({"prompt": "", "n": 33})", 400, "n"},
      {"POST", "/v1/completions", R"({"prompt": [1, 99999]})", 400, std::nullopt},
      {"POST", "/v1/completions", "{\"prompt\": \"\xc3\x28\"}", 400, std::nullopt},
      {"POST", "/v1/completions", "{\"prompt\": \"" + long_prompt + "\"}", 400, std::nullopt},
      {"POST", "/v1/completions", "{\"prompt\": \"" + std::string(9000, 'x') + "\"}", 413, std::nullopt},
      {"POST", "/v1/chat/completions", R"({"messages": [{"role": "user", "content": "hi"}]})", 400, "messages"},
      {"POST", "/v1/chat/completions", R"({"messages": [{"role": "user", "content": 1}]})", 400, "messages[0].content"},
      {"GET", "/v1/nothing", "", 404, std::nullopt},
      {"DELETE", "/v1/completions", "", 405, std::nullopt},
      {"POST", "/health", "", 405, std::nullopt},
  };
  for (const BadCase& c : cases) {
    const std::string what = std::string(c.method) + " " + c.path + " " + c.body.substr(0, 60);
    auto r = http_call(server.port(), c.method, c.path, c.body);
    ASSERT_TRUE(r.has_value()) << what;
    EXPECT_EQ(r->status, c.status) << what << " -> " << r->body;
    const PlainJson j = body_json(r);
    ASSERT_TRUE(j.is_object() && j.contains("error")) << what << " -> " << r->body;
    EXPECT_FALSE(j["error"]["message"].get<std::string>().empty()) << what;
    EXPECT_TRUE(j["error"]["type"].is_string()) << what;
    EXPECT_TRUE(j["error"].contains("code")) << what;
    if (c.param) {
      EXPECT_EQ(j["error"]["param"], *c.param) << what;
    } else {
      EXPECT_TRUE(j["error"]["param"].is_null()) << what;
    }
    if (c.status == 400) {
      EXPECT_EQ(j["error"]["type"], "invalid_request_error") << what;
    }
  }
  // The engine's own message for a prompt over the context.
  auto over = http_call(server.port(), "POST", "/v1/completions", "{\"prompt\": \"" + long_prompt + "\"}");
  ASSERT_TRUE(over.has_value());
  EXPECT_NE(over->body.find("context"), std::string::npos) << over->body;
  // Nothing above changed anything: a good request still gets the known text.
  auto good = http_call(server.port(), "POST", "/v1/completions", kGreedy20);
  ASSERT_TRUE(good.has_value());
  EXPECT_EQ(body_json(good)["choices"][0]["text"].get<std::string>().rfind(kLily, 0), 0u);
}

TEST(MetServe, HealthAndModelsAnswer) {
  MET_REQUIRE_SHARED(model, "models/stories260K.gguf");
  ServeProcess server(serve_args(model, "--model-alias tiny-stories"));
  ASSERT_NE(server.port(), 0) << server.error();
  auto health = http_call(server.port(), "GET", "/health");
  ASSERT_TRUE(health.has_value());
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(body_json(health)["status"], "ok");
  auto models = http_call(server.port(), "GET", "/v1/models");
  ASSERT_TRUE(models.has_value());
  const PlainJson j = body_json(models);
  EXPECT_EQ(j["object"], "list");
  EXPECT_EQ(j["data"][0]["id"], "tiny-stories");
  auto r = http_call(server.port(), "POST", "/v1/completions", kGreedy20);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(body_json(r)["model"], "tiny-stories");
}

TEST(MetServe, WithNoModelItMakesAndServesARandomOneAndSaysSo) {
  testing::TempDir cache;
  for (int run = 0; run < 2; ++run) {  // the second run reuses the model made by the first
    ServeProcess server("--port 0 --threads 1 --cache-dir " + testing::shell_quote(cache.path()));
    ASSERT_NE(server.port(), 0) << server.error();
    EXPECT_NE(server.stderr_text().find("RANDOM weights"), std::string::npos) << server.stderr_text();
    EXPECT_EQ(server.stderr_text().find("making the default model") != std::string::npos, run == 0)
        << server.stderr_text();
    auto models = http_call(server.port(), "GET", "/v1/models");
    ASSERT_TRUE(models.has_value());
    EXPECT_EQ(body_json(models)["data"][0]["id"], "met-random-tiny");
    auto chat = http_call(server.port(), "POST", "/v1/chat/completions",
                          R"({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4})");
    ASSERT_TRUE(chat.has_value());
    EXPECT_EQ(chat->status, 200) << chat->body;
    EXPECT_EQ(body_json(chat)["object"], "chat.completion");
  }
  EXPECT_TRUE(std::filesystem::exists(cache.file("random-tiny-q8_0.gguf")));
}

TEST(MetServe, ChatCompletionOnAMadeModelReturnsAMessage) {
  testing::TempDir dir;
  const std::string model = testing::make_small_model(dir, "chat.gguf", 600);
  ServeProcess server(serve_args(model));
  ASSERT_NE(server.port(), 0) << server.error();
  const std::string messages = R"("messages": [{"role": "system", "content": "be brief"},
      {"role": "user", "content": [{"type": "text", "text": "hello"}]}])";
  auto r = http_call(server.port(), "POST", "/v1/chat/completions",
                     "{" + messages + R"(, "max_completion_tokens": 8, "temperature": 0})");
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->status, 200) << r->body;
  const PlainJson j = body_json(r);
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["id"].get<std::string>().rfind("chatcmpl-", 0), 0u);
  EXPECT_EQ(j["choices"][0]["message"]["role"], "assistant");
  EXPECT_TRUE(j["choices"][0]["message"]["content"].is_string());
  EXPECT_TRUE(j["choices"][0]["finish_reason"].is_string());
  expect_usage_consistent(j["usage"]);
  EXPECT_LE(j["usage"]["completion_tokens"].get<int>(), 8);

  auto s = http_call(server.port(), "POST", "/v1/chat/completions",
                     "{" + messages + R"(, "max_tokens": 8, "temperature": 0, "stream": true})");
  ASSERT_TRUE(s.has_value());
  ASSERT_EQ(s->status, 200) << s->body;
  const std::vector<std::string> events = sse_data(s->body);
  ASSERT_GE(events.size(), 3u);
  const PlainJson first = PlainJson::parse(events[0]);
  EXPECT_EQ(first["object"], "chat.completion.chunk");
  EXPECT_EQ(first["choices"][0]["delta"]["role"], "assistant");
  EXPECT_EQ(streamed_text(*s), j["choices"][0]["message"]["content"].get<std::string>());
  EXPECT_TRUE(PlainJson::parse(events[events.size() - 2])["choices"][0]["finish_reason"].is_string());
}

TEST(MetServe, ChatTemplateFlagGivesAModelWithoutOneAChatTemplate) {
  MET_REQUIRE_SHARED(model, "models/stories260K.gguf");
  testing::TempDir dir;
  const std::string tmpl = dir.file("t.jinja");
  std::ofstream(tmpl) << "{% for m in messages %}{{ m.content }} {% endfor %}";
  ServeProcess server(serve_args(model, "--chat-template " + testing::shell_quote(tmpl)));
  ASSERT_NE(server.port(), 0) << server.error();
  auto r = http_call(server.port(), "POST", "/v1/chat/completions",
                     R"({"messages": [{"role": "user", "content": "Once upon a time"}], "max_tokens": 4})");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(body_json(r)["usage"]["completion_tokens"], 4);
}

TEST(MetServe, BadFlagsExitNonZeroWithOneLineSayingWhat) {
  MET_REQUIRE_SHARED(model, "models/stories260K.gguf");
  const std::string m = testing::shell_quote(model);
  struct Case {
    std::string args;
    const char* says;
  };
  const Case cases[] = {
      {m + " --port 70000", "--port"},
      {m + " --host not-an-ip --port 0", "--host"},
      {m + " --max-concurrent 0", "--max-concurrent"},
      {m + " --chat-template /nonexistent.jinja --port 0", "--chat-template"},
      {"/nonexistent.gguf --port 0", "nonexistent"},
  };
  for (const Case& c : cases) {
    auto r = testing::run_command(testing::met_binary() + " serve " + c.args);
    EXPECT_NE(r.exit_code, 0) << c.args;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << ": " << r.err;
    EXPECT_EQ(r.err.find("listening"), std::string::npos) << c.args;
  }
}

TEST(MetServe, AClientLeavingMidRequestDoesNotStopTheServer) {
  MET_REQUIRE_SHARED(model, "models/stories260K.gguf");
  ServeProcess server(serve_args(model));
  ASSERT_NE(server.port(), 0) << server.error();
  {
    HttpConnection c(server.port());
    ASSERT_TRUE(c.send_all(
        http_request("POST", "/v1/completions",
                     R"({"prompt": "", "max_tokens": 2000, "ignore_eos": true, "temperature": 0, "stream": true})")));
    ASSERT_TRUE(c.read_until("data: "));
  }  // closed mid-stream
  {
    HttpConnection c(server.port());
    ASSERT_TRUE(c.send_all(
        http_request("POST", "/v1/completions", R"({"prompt": "", "max_tokens": 2000, "ignore_eos": true})")));
  }  // closed before the (non-streaming) answer
  auto r = http_call(server.port(), "POST", "/v1/completions", kGreedy20);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(body_json(r)["choices"][0]["text"].get<std::string>().rfind(kLily, 0), 0u);
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
}

TEST(MetServe, SixteenConcurrentStreamingClientsAllFinishWithDone) {
  MET_REQUIRE_SHARED(model, "models/stories260K.gguf");
  ServeProcess server(serve_args(model));
  ASSERT_NE(server.port(), 0) << server.error();
  constexpr int kClients = 16;
  std::vector<std::optional<HttpResponse>> responses(kClients);
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&, i] {
      const std::string body = R"({"prompt": "Once upon a time", "max_tokens": 24, "ignore_eos": true, "seed": )" +
                               std::to_string(i) + R"(, "temperature": 0.8, "stream": true,
                                   "stream_options": {"include_usage": true}})";
      responses[i] = http_call(server.port(), "POST", "/v1/completions", body);
    });
  }
  for (std::thread& t : clients) t.join();
  for (int i = 0; i < kClients; ++i) {
    ASSERT_TRUE(responses[i].has_value()) << "client " << i;
    EXPECT_EQ(responses[i]->status, 200) << responses[i]->body;
    PlainJson usage;
    streamed_text(*responses[i], &usage);  // checks [DONE]
    EXPECT_EQ(usage["completion_tokens"], 24) << "client " << i;
  }
}

TEST(MetServe, RequestsOverMaxConcurrentGet429) {
  testing::TempDir dir;
  const std::string model = testing::make_small_model(dir, "chat.gguf", 600, "--ctx 8192");
  ServeProcess server(serve_args(model, "--max-concurrent 1"));
  ASSERT_NE(server.port(), 0) << server.error();
  bool saw_429 = false;
  for (int attempt = 0; attempt < 5 && !saw_429; ++attempt) {
    HttpConnection busy(server.port());
    ASSERT_TRUE(busy.send_all(http_request(
        "POST", "/v1/completions", R"({"prompt": "hi", "max_tokens": 8000, "ignore_eos": true, "stream": true})")));
    ASSERT_TRUE(busy.read_until("data: "));
    auto r = http_call(server.port(), "POST", "/v1/completions", R"({"prompt": "hi", "max_tokens": 2})");
    ASSERT_TRUE(r.has_value());
    if (r->status == 429) {
      saw_429 = true;
      EXPECT_EQ(body_json(r)["error"]["type"], "rate_limit_error");
    } else {
      EXPECT_EQ(r->status, 200) << r->body;  // only when the first had already finished
    }
  }
  EXPECT_TRUE(saw_429);
}

TEST(MetServe, SigtermLetsTheRequestInFlightFinishThenExitsZero) {
  MET_REQUIRE_SHARED(model, "models/stories260K.gguf");
  ServeProcess server(serve_args(model));
  ASSERT_NE(server.port(), 0) << server.error();
  HttpConnection c(server.port());
  ASSERT_TRUE(c.send_all(http_request("POST", "/v1/completions",
                                      R"({"prompt": "", "max_tokens": 300, "ignore_eos": true, "stream": true})")));
  ASSERT_TRUE(c.read_until("data: "));
  server.terminate();
  EXPECT_TRUE(c.read_until("data: [DONE]")) << c.raw().substr(0, 300);
  EXPECT_EQ(server.wait(), 0) << server.stderr_text();
}

}  // namespace
}  // namespace met
