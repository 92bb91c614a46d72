// `met serve` end to end for Anthropic's Messages API (issue 15): POST
// /v1/messages whole and streamed with thinking and tool_use blocks,
// thinking before forced calls, stop_sequences, /v1/messages/count_tokens,
// x-api-key auth and Anthropic's error shape, over real sockets on a
// random-weight model with the Qwen3.5 template (<think> opened by the
// prompt, <tool_call>).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "serve_test_support.h"
#include "testing/http_client.h"
#include "testing/run_command.h"
#include "testing/shared_data.h"
#include "testing/temp_dir.h"

namespace met {
namespace {

using PlainJson = nlohmann::json;
using testing::HttpConnection;
using testing::ServeProcess;
using testing::serve_args;

struct MessagesSseEvent {
  std::string name;
  PlainJson data;
};

// One request with `headers` (whole lines) on a fresh connection.
std::optional<testing::HttpResponse> send_request(const ServeProcess& s, const std::string& method,
                                                  const std::string& path, const std::string& body,
                                                  const std::vector<std::string>& headers = {}) {
  HttpConnection c(s.port());
  if (!c.connected() || !c.send_all(testing::http_request(method, path, body, headers))) return std::nullopt;
  return c.read_response();
}

PlainJson post_messages(const ServeProcess& s, const std::string& path, const std::string& body, int want_status = 200,
               const std::vector<std::string>& headers = {}) {
  auto r = send_request(s, "POST", path, body, headers);
  EXPECT_TRUE(r.has_value());
  if (!r) return PlainJson();
  EXPECT_EQ(r->status, want_status) << body << " -> " << r->body;
  return PlainJson::parse(r->body, nullptr, /*allow_exceptions=*/false);
}

// "event: NAME\ndata: JSON\n\n" frames, each name checked against its data's type.
std::vector<MessagesSseEvent> messages_sse_events(const std::string& body) {
  std::vector<MessagesSseEvent> out;
  for (size_t at = 0, end; (end = body.find("\n\n", at)) != std::string::npos; at = end + 2) {
    const std::string frame = body.substr(at, end - at);
    const size_t nl = frame.find('\n');
    EXPECT_EQ(frame.rfind("event: ", 0), 0u) << frame;
    MessagesSseEvent e{frame.substr(7, nl - 7), PlainJson::parse(frame.substr(nl + 7), nullptr, false)};
    EXPECT_EQ(e.name, e.data.value("type", "")) << frame;
    out.push_back(std::move(e));
  }
  return out;
}

// Checks the documented order and folds the events into the message.
PlainJson fold_checked(const std::vector<MessagesSseEvent>& events) {
  EXPECT_GE(events.size(), 3u);
  if (events.size() < 3) return PlainJson();
  EXPECT_EQ(events.front().name, "message_start");
  EXPECT_EQ(events[events.size() - 2].name, "message_delta");
  EXPECT_EQ(events.back().name, "message_stop");
  PlainJson m = events.front().data["message"];
  EXPECT_TRUE(m["content"].empty());
  std::vector<std::string> json_of(events.size());
  bool open = false;
  for (size_t i = 1; i + 2 < events.size(); ++i) {
    const MessagesSseEvent& e = events[i];
    const size_t index = e.data.value("index", size_t{99});
    if (e.name == "content_block_start") {
      EXPECT_FALSE(open);
      EXPECT_EQ(index, m["content"].size()) << "indexes count up";
      m["content"].push_back(e.data["content_block"]);
      open = true;
      continue;
    }
    EXPECT_TRUE(open && index + 1 == m["content"].size()) << e.data;
    if (index >= m["content"].size()) return PlainJson();
    PlainJson& block = m["content"][index];
    const PlainJson d = e.data.value("delta", PlainJson::object());  // a stop has none
    if (e.name == "content_block_stop") {
      open = false;
      if (block["type"] == "tool_use") block["input"] = PlainJson::parse(json_of[index], nullptr, false);
    } else if (d["type"] == "text_delta") {
      block["text"] = block["text"].get<std::string>() + d["text"].get<std::string>();
    } else if (d["type"] == "thinking_delta") {
      block["thinking"] = block["thinking"].get<std::string>() + d["thinking"].get<std::string>();
    } else if (d["type"] == "input_json_delta") {
      json_of[index] += d["partial_json"].get<std::string>();
    } else {
      EXPECT_EQ(d["type"], "signature_delta") << e.data;
    }
  }
  EXPECT_FALSE(open);
  const PlainJson& delta = events[events.size() - 2].data;
  m["stop_reason"] = delta["delta"]["stop_reason"];
  m["stop_sequence"] = delta["delta"]["stop_sequence"];
  m["usage"] = delta["usage"];
  return m;
}

std::string qwen35_model(const testing::TempDir& dir, const std::string& tmpl) {
  return testing::make_template_model(dir, "qwen35.gguf", tmpl);
}

TEST(ServeMessages, AMessageWithThinkingStreamsTheSameBlocksItAnswersWhole) {
  MET_REQUIRE_SHARED(tmpl, "chat-templates/Qwen3.5-4B.jinja");
  testing::TempDir dir;
  ServeProcess server(serve_args(qwen35_model(dir, tmpl)));
  ASSERT_NE(server.port(), 0) << server.error();
  const std::string req = R"({"model": "tiny", "max_tokens": 16, "temperature": 0,
      "system": "Think first.", "thinking": {"type": "enabled", "budget_tokens": 5},
      "messages": [{"role": "user", "content": [{"type": "text", "text": "Why is the sky blue?"}]}])";
  const PlainJson m = post_messages(server, "/v1/messages", req + "}");
  EXPECT_EQ(m["type"], "message");
  EXPECT_EQ(m["role"], "assistant");
  EXPECT_EQ(m["id"].get<std::string>().rfind("msg_", 0), 0u) << m;
  ASSERT_FALSE(m["content"].empty()) << m;
  const PlainJson& thinking = m["content"][0];
  EXPECT_EQ(thinking["type"], "thinking") << m;
  EXPECT_FALSE(thinking["thinking"].get<std::string>().empty());
  EXPECT_EQ(thinking["thinking"].get<std::string>().find("</think>"), std::string::npos);
  EXPECT_EQ(thinking["signature"], "");
  for (const PlainJson& block : m["content"]) EXPECT_NE(block["type"], "tool_use") << "no tools given";
  EXPECT_TRUE(m["stop_reason"] == "end_turn" || m["stop_reason"] == "max_tokens") << m;
  EXPECT_TRUE(m["stop_sequence"].is_null());
  EXPECT_GT(m["usage"]["input_tokens"].get<int>(), 0);
  EXPECT_LE(m["usage"]["output_tokens"].get<int>(), 16);
  EXPECT_EQ(m["usage"]["cache_creation_input_tokens"], 0);

  auto s = send_request(server, "POST", "/v1/messages", req + R"(, "stream": true})");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->headers["content-type"], "text/event-stream");
  const std::vector<MessagesSseEvent> events = messages_sse_events(s->body);
  const PlainJson streamed = fold_checked(events);
  EXPECT_EQ(events.front().data["message"]["usage"]["input_tokens"],
            m["usage"]["input_tokens"].get<int>() + m["usage"]["cache_read_input_tokens"].get<int>())
      << "message_start tells the whole prompt";
  EXPECT_EQ(streamed["content"], m["content"]) << "greedy: streamed and whole agree";
  EXPECT_EQ(streamed["stop_reason"], m["stop_reason"]);
  EXPECT_EQ(streamed["usage"]["output_tokens"], m["usage"]["output_tokens"]);
}

TEST(ServeMessages, AForcedToolIsAToolUseBlockWhoseInputFollowsTheSchema) {
  MET_REQUIRE_SHARED(tmpl, "chat-templates/Qwen3.5-4B.jinja");
  testing::TempDir dir;
  ServeProcess server(serve_args(qwen35_model(dir, tmpl)));
  ASSERT_NE(server.port(), 0) << server.error();
  PlainJson req = PlainJson::parse(R"({"max_tokens": 200, "temperature": 0, "thinking": {"type": "disabled"},
      "messages": [{"role": "user", "content": "Weather in Paris?"}],
      "tools": [{"name": "get_weather", "description": "Current weather.", "input_schema": {"type": "object",
                 "properties": {"city": {"enum": ["Paris", "Oslo"]}}, "required": ["city"]}}],
      "tool_choice": {"type": "tool", "name": "get_weather"}})");
  const PlainJson m = post_messages(server, "/v1/messages", req.dump());
  ASSERT_EQ(m["content"].size(), 1u) << m;
  const PlainJson& use = m["content"][0];
  EXPECT_EQ(use["type"], "tool_use");
  EXPECT_EQ(use["name"], "get_weather");
  EXPECT_EQ(use["id"].get<std::string>().rfind("toolu_", 0), 0u) << use;
  EXPECT_TRUE(use["input"]["city"] == "Paris" || use["input"]["city"] == "Oslo") << use;
  EXPECT_EQ(m["stop_reason"], "tool_use") << m;

  req["stream"] = true;
  auto s = send_request(server, "POST", "/v1/messages", req.dump());
  ASSERT_TRUE(s.has_value());
  const std::vector<MessagesSseEvent> events = messages_sse_events(s->body);
  const PlainJson streamed = fold_checked(events);
  ASSERT_EQ(streamed["content"].size(), 1u) << s->body;
  EXPECT_EQ(streamed["content"][0]["type"], "tool_use");
  EXPECT_TRUE(streamed["content"][0]["input"]["city"] == "Paris" || streamed["content"][0]["input"]["city"] == "Oslo")
      << s->body;
  EXPECT_EQ(streamed["stop_reason"], "tool_use");

  // The call and its result as history: the template renders them.
  req.erase("stream");
  req.erase("tool_choice");
  req["messages"].push_back(PlainJson{{"role", "assistant"}, {"content", PlainJson::array({use})}});
  req["messages"].push_back(PlainJson::parse(R"({"role": "user", "content": [
      {"type": "tool_result", "tool_use_id": ")" + use["id"].get<std::string>() + R"(", "content": "18C"}]})"));
  req["max_tokens"] = 4;
  const PlainJson next = post_messages(server, "/v1/messages", req.dump());
  EXPECT_EQ(next["type"], "message") << next;
}

TEST(ServeMessages, WithThinkingOnAForcedCallFollowsAThinkingBlock) {
  MET_REQUIRE_SHARED(tmpl, "chat-templates/Qwen3.5-4B.jinja");
  testing::TempDir dir;
  ServeProcess server(serve_args(qwen35_model(dir, tmpl)));
  ASSERT_NE(server.port(), 0) << server.error();
  PlainJson req = PlainJson::parse(R"({"max_tokens": 200, "temperature": 0,
      "thinking": {"type": "enabled", "budget_tokens": 5},
      "messages": [{"role": "user", "content": "Weather in Paris?"}],
      "tools": [{"name": "get_weather", "input_schema": {"type": "object",
                 "properties": {"city": {"enum": ["Paris", "Oslo"]}}, "required": ["city"]}}],
      "tool_choice": {"type": "any"}})");
  const PlainJson m = post_messages(server, "/v1/messages", req.dump());
  req["stream"] = true;
  auto s = send_request(server, "POST", "/v1/messages", req.dump());
  ASSERT_TRUE(s.has_value());
  const PlainJson streamed = fold_checked(messages_sse_events(s->body));
  for (const PlainJson& message : {m, streamed}) {
    ASSERT_GE(message["content"].size(), 2u) << message;
    EXPECT_EQ(message["content"][0]["type"], "thinking") << message;
    EXPECT_EQ(message["content"][0]["thinking"].get<std::string>().find("</think>"), std::string::npos);
    for (size_t i = 1; i < message["content"].size(); ++i) {
      const PlainJson& use = message["content"][i];
      EXPECT_EQ(use["type"], "tool_use") << message;
      EXPECT_TRUE(use["input"]["city"] == "Paris" || use["input"]["city"] == "Oslo") << use;
    }
    EXPECT_EQ(message["stop_reason"], "tool_use");
  }
  EXPECT_EQ(streamed["content"][0], m["content"][0]) << "greedy: the same thinking";
}

TEST(ServeMessages, AStopSequenceIsNamedAndCountTokensMatchesThePrompt) {
  MET_REQUIRE_SHARED(tmpl, "chat-templates/Qwen3.5-4B.jinja");
  testing::TempDir dir;
  ServeProcess server(serve_args(qwen35_model(dir, tmpl)));
  ASSERT_NE(server.port(), 0) << server.error();
  const std::string head = R"({"temperature": 0, "thinking": {"type": "disabled"},
      "messages": [{"role": "user", "content": "Tell me a story."}])";
  const PlainJson count = post_messages(server, "/v1/messages/count_tokens", head + "}");
  const PlainJson m = post_messages(server, "/v1/messages", head + R"(, "max_tokens": 12})");
  ASSERT_EQ(m["content"].size(), 1u) << m;
  const PlainJson& usage = m["usage"];
  EXPECT_EQ(count["input_tokens"], usage["input_tokens"].get<int>() + usage["cache_read_input_tokens"].get<int>());
  EXPECT_GT(count["input_tokens"].get<int>(), 0);
  const std::string text = m["content"][0]["text"];
  if (m["stop_reason"] == "max_tokens") {
    EXPECT_EQ(m["usage"]["output_tokens"], 12);
  }
  ASSERT_GE(text.size(), 4u) << m;

  // Two or more bytes from the middle, cut at character boundaries.
  auto boundary = [&](size_t at) {
    while (at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) ++at;
    return at;
  };
  const size_t from = boundary(text.size() / 2);
  const std::string stop = text.substr(from, boundary(from + 2) - from);
  ASSERT_FALSE(stop.empty()) << text;
  PlainJson req = PlainJson::parse(head + R"(, "max_tokens": 12})");
  req["stop_sequences"] = PlainJson::array({"never-here", stop});
  const PlainJson stopped = post_messages(server, "/v1/messages", req.dump());
  EXPECT_EQ(stopped["stop_reason"], "stop_sequence") << stopped;
  EXPECT_EQ(stopped["stop_sequence"], stop);
  const std::string cut = stopped["content"].empty() ? "" : stopped["content"][0]["text"].get<std::string>();
  EXPECT_EQ(cut.find(stop), std::string::npos) << "the stop sequence is not part of the text";
}

TEST(ServeMessages, KeysAndErrorsFollowAnthropic) {
  MET_REQUIRE_SHARED(tmpl, "chat-templates/Qwen3.5-4B.jinja");
  testing::TempDir dir;
  ServeProcess server(serve_args(qwen35_model(dir, tmpl), "--api-key sk-msg"));
  ASSERT_NE(server.port(), 0) << server.error();
  const std::string body = R"({"messages": [{"role": "user", "content": "hi"}]})";
  const std::vector<std::string> anthropic = {"x-api-key: sk-msg", "anthropic-version: 2023-06-01"};
  const PlainJson count = post_messages(server, "/v1/messages/count_tokens", body, 200, anthropic);
  EXPECT_GT(count["input_tokens"].get<int>(), 0) << count;
  EXPECT_EQ(post_messages(server, "/v1/messages/count_tokens", body, 200, {"Authorization: Bearer sk-msg"}), count);
  EXPECT_TRUE(post_messages(server, "/v1/chat/completions", R"({"max_tokens": 1, "messages": [{"role": "user",
      "content": "hi"}]})", 200, {"x-api-key: sk-msg"}).contains("choices")) << "x-api-key works on every route";

  const PlainJson unauthorized = post_messages(server, "/v1/messages", body, 401, {"x-api-key: sk-wrong"});
  EXPECT_EQ(unauthorized["type"], "error");
  EXPECT_EQ(unauthorized["error"]["type"], "authentication_error");
  EXPECT_EQ(post_messages(server, "/v1/chat/completions", body, 401, {"x-api-key: sk-wrong"})["error"]["code"],
            "invalid_api_key") << "OpenAI's routes keep OpenAI's shape";

  const PlainJson no_max = post_messages(server, "/v1/messages", body, 400, anthropic);
  EXPECT_EQ(no_max["error"]["type"], "invalid_request_error");
  EXPECT_NE(no_max["error"]["message"].get<std::string>().find("max_tokens"), std::string::npos) << no_max;
  const PlainJson image = post_messages(server, "/v1/messages", R"({"max_tokens": 4, "messages": [{"role": "user",
      "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}}]}]})",
                               400, anthropic);
  EXPECT_NE(image["error"]["message"].get<std::string>().find("image"), std::string::npos) << image;
  const PlainJson stops = post_messages(server, "/v1/messages", R"({"max_tokens": 4, "stop_sequences": [1],
      "messages": [{"role": "user", "content": "hi"}]})", 400, anthropic);
  EXPECT_NE(stops["error"]["message"].get<std::string>().find("stop_sequences"), std::string::npos) << stops;

  auto get = send_request(server, "GET", "/v1/messages", "", anthropic);
  ASSERT_TRUE(get.has_value());
  EXPECT_EQ(get->status, 405);
  EXPECT_EQ(PlainJson::parse(get->body)["type"], "error") << get->body;
  auto missing = send_request(server, "POST", "/v1/messages/batches", "{}", anthropic);
  ASSERT_TRUE(missing.has_value());
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(PlainJson::parse(missing->body)["error"]["type"], "not_found_error") << missing->body;
}

}  // namespace
}  // namespace met
