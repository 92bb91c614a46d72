// Tests for ResponsesEncoder: the Responses API's streamed events in their
// documented order with sequence numbers, the items made from reasoning,
// text and tool calls, incomplete and failed responses, and a whole body
// that equals a stream's final response.
#include "server/responses_encoder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace met {
namespace {

using Json = nlohmann::ordered_json;

struct SseEvent {
  std::string type;
  Json data;
};

// Splits SSE bytes into events, checking each one's framing and that its
// `event:` line names its data's type.
std::vector<SseEvent> parse_responses_sse(const std::string& bytes) {
  std::vector<SseEvent> out;
  size_t at = 0;
  while (at < bytes.size()) {
    const size_t end = bytes.find("\n\n", at);
    EXPECT_NE(end, std::string::npos) << "an event ends with a blank line";
    if (end == std::string::npos) break;
    const std::string block = bytes.substr(at, end - at);
    at = end + 2;
    const size_t nl = block.find('\n');
    EXPECT_EQ(block.rfind("event: ", 0), 0u) << block;
    EXPECT_EQ(block.substr(nl + 1, 6), "data: ") << block;
    SseEvent e{block.substr(7, nl - 7), Json::parse(block.substr(nl + 7))};
    EXPECT_EQ(e.data["type"], e.type);
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<std::string> responses_event_types(const std::vector<SseEvent>& events) {
  std::vector<std::string> t;
  for (const SseEvent& e : events) t.push_back(e.type);
  return t;
}

ResponseMeta responses_meta(std::optional<ChatShape> shape = std::nullopt) {
  ResponseMeta m;
  m.endpoint = Endpoint::kChatCompletions;
  m.id = make_responses_id(0x2a);
  m.created = 1700000000;
  m.model = "tiny";
  m.shape = std::move(shape);
  return m;
}

ChatShape responses_hermes_shape() {
  ChatShape s;
  s.format = ChatFormat{ChatFamily::kHermes, "<think>", "</think>"};
  s.starts_in_thinking = true;
  s.parse_tool_calls = true;
  s.tool_names = {"get_weather"};
  s.id_seed = 7;
  return s;
}

FinishEvent responses_finish(const std::string& reason) {
  FinishEvent f;
  f.finish_reason = reason;
  f.usage = Usage{.prompt_tokens = 11, .completion_tokens = 5, .cached_prompt_tokens = 2, .reasoning_tokens = 3};
  return f;
}

const Json kResponsesEcho = Json{{"instructions", nullptr}, {"tools", Json::array()}, {"store", true}};

// The whole stream for `text` fed in pieces of `step` bytes.
std::vector<SseEvent> responses_stream(ResponsesEncoder& enc, const std::string& text, size_t step,
                                       const std::string& reason) {
  std::string bytes = enc.start();
  for (size_t i = 0; i < text.size(); i += step) bytes += enc.encode(0, DeltaEvent{{}, text.substr(i, step)});
  bytes += enc.encode(0, responses_finish(reason));
  return parse_responses_sse(bytes);
}

void expect_responses_sequence(const std::vector<SseEvent>& events) {
  for (size_t i = 0; i < events.size(); ++i) EXPECT_EQ(events[i].data["sequence_number"], i) << events[i].type;
}

TEST(ResponsesEncoder, PlainTextStreamsTheDocumentedEventOrder) {
  ResponsesEncoder enc(responses_meta(), kResponsesEcho, false);
  const std::vector<SseEvent> events = responses_stream(enc, "Hello", 3, "stop");
  EXPECT_EQ(responses_event_types(events), (std::vector<std::string>{
                                  "response.created", "response.in_progress", "response.output_item.added",
                                  "response.content_part.added", "response.output_text.delta",
                                  "response.output_text.delta", "response.output_text.done",
                                  "response.content_part.done", "response.output_item.done", "response.completed"}));
  expect_responses_sequence(events);
  EXPECT_EQ(events[0].data["response"]["status"], "in_progress");
  EXPECT_TRUE(events[0].data["response"]["output"].empty());
  EXPECT_EQ(events[4].data["delta"], "Hel");
  EXPECT_EQ(events[4].data["item_id"], events[2].data["item"]["id"]);
  EXPECT_EQ(events[6].data["text"], "Hello");
  const Json& r = events.back().data["response"];
  EXPECT_EQ(r["id"], "resp_000000000000002a");
  EXPECT_EQ(r["object"], "response");
  EXPECT_EQ(r["status"], "completed");
  EXPECT_EQ(r["model"], "tiny");
  EXPECT_EQ(r["store"], true);
  ASSERT_EQ(r["output"].size(), 1u);
  const Json& msg = r["output"][0];
  EXPECT_EQ(msg["type"], "message");
  EXPECT_EQ(msg["id"].get<std::string>().rfind("msg_", 0), 0u);
  EXPECT_EQ(msg["status"], "completed");
  EXPECT_EQ(msg["role"], "assistant");
  EXPECT_EQ(msg["content"][0], (Json{{"type", "output_text"}, {"text", "Hello"}, {"annotations", Json::array()}}));
  EXPECT_EQ(r["usage"]["input_tokens"], 11);
  EXPECT_EQ(r["usage"]["input_tokens_details"]["cached_tokens"], 2);
  EXPECT_EQ(r["usage"]["output_tokens"], 5);
  EXPECT_EQ(r["usage"]["output_tokens_details"]["reasoning_tokens"], 3);
  EXPECT_EQ(r["usage"]["total_tokens"], 16);
}

TEST(ResponsesEncoder, ReasoningThenAToolCallStreamTwoItemsInOrderInAnySplit) {
  const std::string text = "I need the weather.</think>\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
                           "{\"city\": \"Paris\"}}\n</tool_call>";
  for (size_t step : {size_t{1}, size_t{5}, text.size()}) {
    ResponsesEncoder enc(responses_meta(responses_hermes_shape()), kResponsesEcho, false);
    const std::vector<SseEvent> events = responses_stream(enc, text, step, "stop");
    expect_responses_sequence(events);
    std::vector<std::string> collapsed;  // runs of one delta type as one
    for (const std::string& t : responses_event_types(events)) {
      if (collapsed.empty() || collapsed.back() != t || t.find(".delta") == std::string::npos) collapsed.push_back(t);
    }
    EXPECT_EQ(collapsed, (std::vector<std::string>{
                             "response.created", "response.in_progress", "response.output_item.added",
                             "response.content_part.added", "response.reasoning_text.delta",
                             "response.reasoning_text.done", "response.content_part.done",
                             "response.output_item.done", "response.output_item.added",
                             "response.function_call_arguments.delta", "response.function_call_arguments.done",
                             "response.output_item.done", "response.completed"}))
        << step;
    const Json& out = events.back().data["response"]["output"];
    ASSERT_EQ(out.size(), 2u) << step;
    EXPECT_EQ(out[0]["type"], "reasoning");
    EXPECT_EQ(out[0]["id"].get<std::string>().rfind("rs_", 0), 0u);
    EXPECT_EQ(out[0]["content"][0]["text"], "I need the weather.");
    EXPECT_TRUE(out[0]["summary"].empty()) << "no summary was asked";
    EXPECT_EQ(out[1]["type"], "function_call");
    EXPECT_EQ(out[1]["id"].get<std::string>().rfind("fc_", 0), 0u);
    EXPECT_EQ(out[1]["call_id"].get<std::string>().rfind("call_", 0), 0u);
    EXPECT_EQ(out[1]["name"], "get_weather");
    EXPECT_EQ(out[1]["status"], "completed");
    EXPECT_EQ(Json::parse(out[1]["arguments"].get<std::string>()), (Json{{"city", "Paris"}}));
    std::string streamed;
    for (const SseEvent& e : events) {
      if (e.type == "response.function_call_arguments.delta") streamed += e.data["delta"].get<std::string>();
    }
    EXPECT_EQ(streamed, out[1]["arguments"]);
  }
}

TEST(ResponsesEncoder, AnAskedSummaryStreamsAsSummaryTextToo) {
  ResponsesEncoder enc(responses_meta(responses_hermes_shape()), kResponsesEcho, /*reasoning_summary=*/true);
  const std::vector<SseEvent> events = responses_stream(enc, "Think.</think>Answer.", 100, "stop");
  EXPECT_EQ(responses_event_types(events), (std::vector<std::string>{
                                  "response.created", "response.in_progress", "response.output_item.added",
                                  "response.reasoning_summary_part.added", "response.content_part.added",
                                  "response.reasoning_text.delta", "response.reasoning_summary_text.delta",
                                  "response.reasoning_text.done", "response.content_part.done",
                                  "response.reasoning_summary_text.done", "response.reasoning_summary_part.done",
                                  "response.output_item.done", "response.output_item.added",
                                  "response.content_part.added", "response.output_text.delta",
                                  "response.output_text.done", "response.content_part.done",
                                  "response.output_item.done", "response.completed"}));
  const Json& out = events.back().data["response"]["output"];
  EXPECT_EQ(out[0]["summary"], (Json::array({Json{{"type", "summary_text"}, {"text", "Think."}}})));
  EXPECT_EQ(out[1]["content"][0]["text"], "Answer.");
}

TEST(ResponsesEncoder, ALengthFinishIsIncompleteForMaxOutputTokens) {
  ResponsesEncoder enc(responses_meta(), kResponsesEcho, false);
  const std::vector<SseEvent> events = responses_stream(enc, "Once upon", 4, "length");
  EXPECT_EQ(events.back().type, "response.incomplete");
  const Json& r = events.back().data["response"];
  EXPECT_EQ(r["status"], "incomplete");
  EXPECT_EQ(r["incomplete_details"], (Json{{"reason", "max_output_tokens"}}));
  EXPECT_EQ(r["output"][0]["content"][0]["text"], "Once upon");
}

TEST(ResponsesEncoder, AnEngineErrorEndsTheStreamWithResponseFailed) {
  ResponsesEncoder enc(responses_meta(), kResponsesEcho, false);
  std::string bytes = enc.start();
  bytes += enc.encode(0, DeltaEvent{{}, "Hi"});
  bytes += enc.encode(0, ErrorEvent{"the device failed"});
  EXPECT_EQ(enc.encode(0, responses_finish("stop")), "") << "nothing after the end";
  const std::vector<SseEvent> events = parse_responses_sse(bytes);
  expect_responses_sequence(events);
  EXPECT_EQ(events.back().type, "response.failed");
  const Json& r = events.back().data["response"];
  EXPECT_EQ(r["status"], "failed");
  EXPECT_EQ(r["error"]["code"], "server_error");
  EXPECT_EQ(r["error"]["message"], "the device failed");
  EXPECT_EQ(bytes.find("[DONE]"), std::string::npos);
}

TEST(ResponsesEncoder, TheWholeBodyEqualsTheStreamsFinalResponse) {
  const std::string text =
      "Hmm.</think>Sure.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {}}\n</tool_call>";
  ResponsesEncoder streamed(responses_meta(responses_hermes_shape()), kResponsesEcho, true);
  const Json from_stream = responses_stream(streamed, text, 2, "stop").back().data["response"];
  int num_done = 0;
  Json stored;
  ResponsesEncoder whole(responses_meta(responses_hermes_shape()), kResponsesEcho, true, [&](const Json& r) {
    ++num_done;
    stored = r;
  });
  ChoiceOutput c;
  c.text = text;
  c.finish = responses_finish("stop");
  const Json body = Json::parse(whole.body(std::span<const ChoiceOutput>(&c, 1)));
  EXPECT_EQ(body, from_stream);
  EXPECT_EQ(num_done, 1);
  EXPECT_EQ(stored, body);
  ASSERT_EQ(body["output"].size(), 3u);
  EXPECT_EQ(body["output"][1]["content"][0]["text"], "Sure.");
}

TEST(ResponsesEncoder, AnEmptyOutputIsOneEmptyMessage) {
  ResponsesEncoder enc(responses_meta(), kResponsesEcho, false);
  const std::vector<SseEvent> events = responses_stream(enc, "", 1, "stop");
  const Json& out = events.back().data["response"]["output"];
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0]["content"][0]["text"], "");
  EXPECT_EQ(events.size(), 8u);  // created, in_progress, added, part added, text done, part done, item done, completed
}

TEST(ResponsesEncoder, TheEchoedRequestFieldsAreInTheResponseObject) {
  const Json echo{{"instructions", "Be brief."}, {"temperature", 0.5}, {"metadata", Json{{"k", "v"}}}};
  const Json r = response_object(responses_meta(), echo, "completed", Json::array(), nullptr);
  EXPECT_EQ(r["instructions"], "Be brief.");
  EXPECT_EQ(r["temperature"], 0.5);
  EXPECT_EQ(r["metadata"]["k"], "v");
  EXPECT_TRUE(r["usage"].is_null());
  EXPECT_TRUE(r["error"].is_null());
  EXPECT_EQ(r["created_at"], 1700000000);
}

}  // namespace
}  // namespace met
