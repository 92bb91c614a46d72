// Tests for MessagesEncoder and MessageBlocks: Anthropic's streamed events in
// the documented order (message_start, each block's start, deltas and stop,
// message_delta, message_stop), stop reasons, usage, errors, and a whole
// body that equals the fold of the stream.
#include "server/messages_encoder.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace met {
namespace {

using Json = nlohmann::ordered_json;

struct MessagesSse {
  std::string name;
  Json data;
};

// Splits "event: NAME\ndata: JSON\n\n" frames; each event's name is its data's type.
std::vector<MessagesSse> parse_messages_sse(const std::string& bytes) {
  std::vector<MessagesSse> out;
  size_t at = 0;
  while (at < bytes.size()) {
    const size_t end = bytes.find("\n\n", at);
    EXPECT_NE(end, std::string::npos) << "an unterminated frame";
    if (end == std::string::npos) break;
    const std::string frame = bytes.substr(at, end - at);
    const size_t nl = frame.find('\n');
    EXPECT_EQ(frame.rfind("event: ", 0), 0u) << frame;
    EXPECT_EQ(frame.compare(nl + 1, 6, "data: "), 0) << frame;
    MessagesSse e{frame.substr(7, nl - 7), Json::parse(frame.substr(nl + 7))};
    EXPECT_EQ(e.name, e.data["type"].get<std::string>());
    out.push_back(std::move(e));
    at = end + 2;
  }
  return out;
}

ResponseMeta message_meta(std::optional<ChatShape> shape = std::nullopt) {
  ResponseMeta m;
  m.endpoint = Endpoint::kChatCompletions;
  m.id = "msg_0000000000000001";
  m.model = "tiny";
  m.shape = std::move(shape);
  m.num_prompt_tokens = 12;
  return m;
}

ChatShape hermes_thinking_shape() {
  ChatShape s;
  s.format = ChatFormat{ChatFamily::kHermes, "<think>", "</think>"};
  s.starts_in_thinking = true;
  s.parse_tool_calls = true;
  s.tool_names = {"get_weather"};
  s.id_seed = 3;
  return s;
}

FinishEvent message_finish(std::string reason, int32_t completion = 5) {
  FinishEvent f;
  f.finish_reason = std::move(reason);
  f.usage.prompt_tokens = 12;
  f.usage.cached_prompt_tokens = 4;
  f.usage.completion_tokens = completion;
  return f;
}

// The whole stream for `text` fed in pieces of `step` bytes, then `f`.
std::vector<MessagesSse> stream_message(MessagesEncoder& enc, const std::string& text, size_t step,
                                        const FinishEvent& f) {
  std::string bytes = enc.start();
  for (size_t i = 0; i < text.size(); i += step) bytes += enc.encode(0, DeltaEvent{{}, text.substr(i, step)});
  bytes += enc.encode(0, f);
  return parse_messages_sse(bytes);
}

std::vector<std::string> event_names(const std::vector<MessagesSse>& events) {
  std::vector<std::string> out;
  for (const MessagesSse& e : events) {
    const std::string delta = e.data.contains("delta") && e.data["delta"].contains("type")
                                  ? "." + e.data["delta"]["type"].get<std::string>()
                                  : "";
    out.push_back(e.name + delta);
  }
  return out;
}

// The message a client builds from the stream (as the SDK's MessageStream does).
Json fold_stream(const std::vector<MessagesSse>& events) {
  Json message;
  ContentFold content;
  for (const MessagesSse& e : events) {
    if (e.name == "message_start") message = e.data["message"];
    if (e.name.rfind("content_block", 0) == 0) content.add(e.data);
    if (e.name == "message_delta") {
      message["stop_reason"] = e.data["delta"]["stop_reason"];
      message["stop_sequence"] = e.data["delta"]["stop_sequence"];
      message["usage"] = e.data["usage"];
    }
  }
  message["content"] = content.take();
  return message;
}

TEST(MessagesEncoder, PlainTextStreamsInTheDocumentedOrder) {
  MessagesEncoder enc(message_meta(), {});
  const std::vector<MessagesSse> events = stream_message(enc, "Hello world", 4, message_finish("stop"));
  const std::vector<std::string> want = {"message_start",       "content_block_start",
                                         "content_block_delta.text_delta", "content_block_delta.text_delta",
                                         "content_block_delta.text_delta", "content_block_stop",
                                         "message_delta",       "message_stop"};
  EXPECT_EQ(event_names(events), want);
  const Json& start = events[0].data["message"];
  EXPECT_EQ(start["id"], "msg_0000000000000001");
  EXPECT_EQ(start["role"], "assistant");
  EXPECT_EQ(start["content"], Json::array());
  EXPECT_TRUE(start["stop_reason"].is_null());
  EXPECT_EQ(start["usage"]["input_tokens"], 12);
  EXPECT_EQ(start["usage"]["output_tokens"], 0);
  EXPECT_EQ(events[1].data["content_block"], (Json{{"type", "text"}, {"text", ""}}));
  const Json& delta = events[6].data;
  EXPECT_EQ(delta["delta"]["stop_reason"], "end_turn");
  EXPECT_TRUE(delta["delta"]["stop_sequence"].is_null());
  EXPECT_EQ(delta["usage"], (Json{{"input_tokens", 8}, {"cache_creation_input_tokens", 0},
                                  {"cache_read_input_tokens", 4}, {"output_tokens", 5}}));
  EXPECT_EQ(fold_stream(events)["content"], Json::parse(R"([{"type": "text", "text": "Hello world"}])"));
}

TEST(MessagesEncoder, ThinkingTextAndToolUseAreBlocksWithIncreasingIndexesInAnySplit) {
  const std::string text = "Let me see.</think>\n\nChecking.\n<tool_call>\n{\"name\": \"get_weather\", "
                           "\"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
  for (size_t step : {size_t{1}, size_t{5}, text.size()}) {
    MessagesEncoder enc(message_meta(hermes_thinking_shape()), {});
    const std::vector<MessagesSse> events = stream_message(enc, text, step, message_finish("stop"));
    constexpr size_t kNone = 99;  // no block open
    size_t next_index = 0;
    size_t open = kNone;
    for (const MessagesSse& e : events) {
      if (e.name == "content_block_start") {
        EXPECT_EQ(open, kNone) << "one block at a time";
        EXPECT_EQ(e.data["index"], next_index);
        open = next_index++;
      } else if (e.name == "content_block_delta") {
        EXPECT_EQ(e.data["index"], open) << step;
      } else if (e.name == "content_block_stop") {
        EXPECT_EQ(e.data["index"], open);
        open = kNone;
      }
    }
    EXPECT_EQ(events.front().name, "message_start");
    EXPECT_EQ(events.back().name, "message_stop");
    const Json m = fold_stream(events);
    ASSERT_EQ(m["content"].size(), 3u) << m.dump();
    EXPECT_EQ(m["content"][0], (Json{{"type", "thinking"}, {"thinking", "Let me see."}, {"signature", ""}}));
    EXPECT_EQ(m["content"][1]["type"], "text");
    EXPECT_EQ(m["content"][1]["text"].get<std::string>().find("Checking."), 0u);
    EXPECT_EQ(m["content"][2]["type"], "tool_use");
    EXPECT_EQ(m["content"][2]["name"], "get_weather");
    EXPECT_EQ(m["content"][2]["input"], (Json{{"city", "Paris"}}));
    EXPECT_EQ(m["content"][2]["id"].get<std::string>().rfind("toolu_", 0), 0u);
    EXPECT_EQ(m["stop_reason"], "tool_use");
  }
}

TEST(MessagesEncoder, AThinkingBlockEndsWithASignatureDelta) {
  MessagesEncoder enc(message_meta(hermes_thinking_shape()), {});
  const std::vector<std::string> got =
      event_names(stream_message(enc, "Hmm.</think>Yes.", 100, message_finish("stop")));
  const std::vector<std::string> want = {
      "message_start",          "content_block_start", "content_block_delta.thinking_delta",
      "content_block_delta.signature_delta", "content_block_stop",  "content_block_start",
      "content_block_delta.text_delta",      "content_block_stop",  "message_delta",
      "message_stop"};
  EXPECT_EQ(got, want);
}

TEST(MessagesEncoder, WhitespaceAloneOpensNoBlock) {
  MessagesEncoder enc(message_meta(hermes_thinking_shape()), {});
  const Json m = fold_stream(stream_message(enc, "Plan.</think>\n\n", 1, message_finish("stop")));
  EXPECT_EQ(m["content"].size(), 1u) << m.dump();
  EXPECT_EQ(m["content"][0]["type"], "thinking");
}

TEST(MessagesEncoder, StopReasonsMapFromTheFinish) {
  const std::vector<std::string> stops = {"END", "###"};
  FinishEvent by_stop = message_finish("stop");
  by_stop.stop_string_index = 1;
  const MessagesStop s = messages_stop(by_stop, false, stops);
  EXPECT_EQ(s.reason, "stop_sequence");
  EXPECT_EQ(s.sequence, std::optional<std::string>("###"));
  EXPECT_EQ(messages_stop(message_finish("stop"), false, stops).reason, "end_turn");
  EXPECT_EQ(messages_stop(message_finish("stop"), true, stops).reason, "tool_use");
  EXPECT_EQ(messages_stop(message_finish("tool_calls"), false, stops).reason, "tool_use");
  EXPECT_EQ(messages_stop(message_finish("length"), true, stops).reason, "max_tokens");
  EXPECT_EQ(messages_stop(message_finish("timeout"), false, stops).reason, "max_tokens");
}

TEST(MessagesEncoder, AStreamedStopSequenceIsNamedInMessageDelta) {
  MessagesEncoder enc(message_meta(), {"END"});
  FinishEvent f = message_finish("stop");
  f.stop_string_index = 0;
  const std::vector<MessagesSse> events = stream_message(enc, "abc", 3, f);
  const Json& delta = events[events.size() - 2].data["delta"];
  EXPECT_EQ(delta["stop_reason"], "stop_sequence");
  EXPECT_EQ(delta["stop_sequence"], "END");
}

TEST(MessagesEncoder, AnErrorEndsTheStreamWithAnErrorEvent) {
  MessagesEncoder enc(message_meta(), {});
  std::string bytes = enc.start() + enc.encode(0, DeltaEvent{{}, "Hi"});
  bytes += enc.encode(0, ErrorEvent{"the device failed"});
  EXPECT_EQ(enc.encode(0, message_finish("stop")), "") << "nothing after the error";
  const std::vector<MessagesSse> events = parse_messages_sse(bytes);
  ASSERT_EQ(events.back().name, "error");
  EXPECT_EQ(events.back().data["error"]["type"], "api_error");
  EXPECT_EQ(events.back().data["error"]["message"], "the device failed");
  MessagesEncoder failing(message_meta(), {});
  const std::vector<MessagesSse> shut =
      parse_messages_sse(failing.start() + failing.fail(http_error(503, "shutting down")));
  EXPECT_EQ(shut.back().data["error"]["type"], "overloaded_error");
}

TEST(MessagesEncoder, AWholeBodyEqualsTheFoldOfItsStream) {
  const std::string text = "Think.</think>Answer.<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
                           "{\"city\": \"Oslo\"}}\n</tool_call>";
  MessagesEncoder streamed(message_meta(hermes_thinking_shape()), {});
  const Json folded = fold_stream(stream_message(streamed, text, 2, message_finish("stop", 30)));
  ChoiceOutput c;
  c.text = text;
  c.finish = message_finish("stop", 30);
  MessagesEncoder whole(message_meta(hermes_thinking_shape()), {});
  const Json body = Json::parse(whole.body(std::span<const ChoiceOutput>(&c, 1)));
  EXPECT_EQ(body["type"], "message");
  EXPECT_EQ(body["id"], "msg_0000000000000001");
  EXPECT_EQ(body["model"], "tiny");
  EXPECT_EQ(body["content"], folded["content"]);
  EXPECT_EQ(body["stop_reason"], "tool_use");
  EXPECT_TRUE(body["stop_sequence"].is_null());
  EXPECT_EQ(body["usage"], folded["usage"]);
  EXPECT_EQ(body["usage"]["output_tokens"], 30);
}

TEST(MessagesEncoder, WithoutAShapeTheWholeTextIsOneTextBlock) {
  ChoiceOutput c;
  c.text = "<think>raw</think>";
  c.finish = message_finish("length");
  MessagesEncoder enc(message_meta(), {});
  const Json body = Json::parse(enc.body(std::span<const ChoiceOutput>(&c, 1)));
  EXPECT_EQ(body["content"], Json::parse(R"([{"type": "text", "text": "<think>raw</think>"}])"));
  EXPECT_EQ(body["stop_reason"], "max_tokens");
}

TEST(MessageBlocks, ToolUseIdsReadToolu) {
  EXPECT_EQ(tool_use_id("call_abc123"), "toolu_abc123");
  EXPECT_EQ(tool_use_id("xyz"), "toolu_xyz");
}

}  // namespace
}  // namespace met
