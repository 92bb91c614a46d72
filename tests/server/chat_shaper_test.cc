// Tests for ChatShaper: a family's markup becomes reasoning, content and
// tool-call deltas; forced tool calls become tool_calls.
#include "server/chat_shaper.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace met {
namespace {

using Json = nlohmann::ordered_json;

struct Shaped {
  std::string reasoning, content;
  std::vector<Json> calls;           // merged per index: id, name, arguments
  ParsedMessage message;
};

// Feeds `text` in pieces of `step` bytes and merges the deltas like a client.
Shaped run(const ChatShape& shape, const std::string& text, size_t step) {
  ChatShaper shaper(shape);
  std::vector<ParseEvent> events;
  for (size_t i = 0; i < text.size(); i += step) shaper.feed(std::string_view(text).substr(i, step), events);
  Shaped out;
  out.message = shaper.finish(events);
  const std::vector<Json> deltas = chat_delta_json(events);
  for (const Json& d : deltas) {
    if (d.contains("reasoning_content")) out.reasoning += d["reasoning_content"].get<std::string>();
    if (d.contains("content")) out.content += d["content"].get<std::string>();
    if (!d.contains("tool_calls")) continue;
    const Json& c = d["tool_calls"][0];
    const size_t i = c["index"].get<size_t>();
    if (out.calls.size() <= i) out.calls.resize(i + 1, Json{{"arguments", ""}});
    if (c.contains("id")) out.calls[i]["id"] = c["id"];
    if (c["function"].contains("name")) out.calls[i]["name"] = c["function"]["name"];
    out.calls[i]["arguments"] = out.calls[i]["arguments"].get<std::string>() + c["function"]["arguments"].get<std::string>();
  }
  return out;
}

ChatShape hermes_thinking() {
  ChatShape s;
  s.format = ChatFormat{ChatFamily::kHermes, "<think>", "</think>"};
  s.starts_in_thinking = true;
  s.parse_tool_calls = true;
  s.id_seed = 7;
  return s;
}

TEST(ChatShaper, AHermesTurnSplitsIntoReasoningAndAToolCallInAnySplit) {
  const std::string text = "I need the weather.</think>\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
                           "{\"city\": \"Paris\"}}\n</tool_call>";
  for (size_t step : {size_t{1}, size_t{3}, size_t{7}, text.size()}) {
    const Shaped s = run(hermes_thinking(), text, step);
    EXPECT_EQ(s.reasoning, "I need the weather.") << step;
    EXPECT_EQ(s.content.find("<tool_call>"), std::string::npos) << "no markup in content";
    ASSERT_EQ(s.calls.size(), 1u) << step;
    EXPECT_EQ(s.calls[0]["name"], "get_weather");
    EXPECT_EQ(Json::parse(s.calls[0]["arguments"].get<std::string>()), Json::parse(R"({"city": "Paris"})"));
    ASSERT_EQ(s.message.tool_calls.size(), 1u);
    EXPECT_EQ(s.message.tool_calls[0].id, s.calls[0]["id"]);
    EXPECT_EQ(shaped_finish_reason("stop", s.message), "tool_calls");
    EXPECT_EQ(shaped_finish_reason("length", s.message), "length");
  }
}

TEST(ChatShaper, ToolMarkupIsContentWhenToolCallsAreNotParsed) {
  ChatShape shape = hermes_thinking();
  shape.starts_in_thinking = false;
  shape.parse_tool_calls = false;
  const Shaped s = run(shape, "<tool_call>{}</tool_call>", 4);
  EXPECT_TRUE(s.calls.empty());
  EXPECT_EQ(s.content, "<tool_call>{}</tool_call>");
  EXPECT_EQ(shaped_finish_reason("stop", s.message), "stop");
}

TEST(ChatShaper, AForcedNamedCallStreamsItsArgumentsAsTheyCome) {
  ChatShape shape;
  shape.forced = ForcedTools::kNamed;
  shape.forced_name = "get_weather";
  const Shaped s = run(shape, R"({"city": "Oslo"})", 5);
  ASSERT_EQ(s.calls.size(), 1u);
  EXPECT_EQ(s.calls[0]["name"], "get_weather");
  EXPECT_EQ(s.calls[0]["arguments"], R"({"city": "Oslo"})");
  EXPECT_EQ(s.message.tool_calls.at(0).id, s.calls[0]["id"]);
  EXPECT_EQ(shaped_finish_reason("stop", s.message), "tool_calls");
}

TEST(ChatShaper, AForcedRequiredArrayBecomesToolCalls) {
  ChatShape shape;
  shape.forced = ForcedTools::kRequired;
  const std::string text = R"([{"name": "a", "parameters": {"x": 1}}, {"name": "b", "parameters": {}}])";
  for (bool streamed : {true, false}) {
    shape.stream_tool_calls = streamed;
    for (size_t step : {size_t{1}, size_t{9}, text.size()}) {
      const Shaped s = run(shape, text, step);
      ASSERT_EQ(s.calls.size(), 2u) << step;
      EXPECT_EQ(s.calls[0]["name"], "a");
      EXPECT_EQ(s.calls[1]["name"], "b");
      EXPECT_EQ(Json::parse(s.calls[0]["arguments"].get<std::string>()), Json::parse(R"({"x": 1})"));
      EXPECT_EQ(Json::parse(s.calls[1]["arguments"].get<std::string>()), Json::object());
      EXPECT_NE(s.calls[0]["id"], s.calls[1]["id"]);
      EXPECT_EQ(s.content, "");
      ASSERT_EQ(s.message.tool_calls.size(), 2u);
      EXPECT_EQ(s.message.tool_calls[1].arguments, s.calls[1]["arguments"]);
      EXPECT_EQ(shaped_finish_reason("stop", s.message), "tool_calls");
    }
  }
}

// OpenAI streams each call of a parallel array as it comes: its name first,
// then its arguments in pieces, before the next call begins.
TEST(ChatShaper, AStreamedRequiredArrayStreamsEachCallsArgumentsInPieces) {
  ChatShape shape;
  shape.forced = ForcedTools::kRequired;
  const std::string text =
      R"([{"name": "get_weather", "parameters": {"city": "Paris", "days": [1, 2]}}, )"
      R"({"name": "get_time", "parameters": {"zone": "CET"}}])";
  ChatShaper shaper(shape);
  std::vector<ParseEvent> events;
  const size_t second = text.find(R"({"name": "get_time")");
  for (size_t i = 0; i < second; ++i) shaper.feed(text.substr(i, 1), events);
  // Before the second call's text arrives the first one is out, in pieces.
  ASSERT_FALSE(events.empty());
  ASSERT_TRUE(std::holds_alternative<ToolCallBegin>(events[0]));
  EXPECT_EQ(std::get<ToolCallBegin>(events[0]).name, "get_weather");
  std::string args;
  size_t pieces = 0;
  for (const ParseEvent& e : events) {
    if (const auto* a = std::get_if<ToolCallArgumentsDelta>(&e)) {
      EXPECT_EQ(a->index, 0u);
      args += a->text;
      ++pieces;
    }
  }
  EXPECT_GT(pieces, 3u) << "the arguments stream as they come, not in one piece";
  EXPECT_EQ(Json::parse(args), Json::parse(R"({"city": "Paris", "days": [1, 2]})"));
  const size_t first_call_events = events.size();
  for (size_t i = second; i < text.size(); ++i) shaper.feed(text.substr(i, 1), events);
  const ParsedMessage m = shaper.finish(events);
  ASSERT_GT(events.size(), first_call_events);
  ASSERT_TRUE(std::holds_alternative<ToolCallBegin>(events[first_call_events]));
  EXPECT_EQ(std::get<ToolCallBegin>(events[first_call_events]).index, 1u);
  ASSERT_EQ(m.tool_calls.size(), 2u);
  EXPECT_EQ(m.tool_calls[0].arguments, args);
}

// A call cut off by max_tokens: the calls complete so far, and none of the
// cut-off text in content (finish_reason stays "length").
TEST(ChatShaper, AForcedCallCutOffLeaksNothingIntoContent) {
  ChatShape required;
  required.forced = ForcedTools::kRequired;
  const std::string cut = R"([{"name": "a", "parameters": {"x": 1}}, {"name": "b", "parameters": {"y": "ha)";
  ChatShape named;
  named.forced = ForcedTools::kNamed;
  named.forced_name = "get_weather";
  const std::string cut_named = R"({"city": "Os)";
  for (bool streamed : {true, false}) {
    required.stream_tool_calls = streamed;
    named.stream_tool_calls = streamed;
    for (size_t step : {size_t{1}, size_t{5}, cut.size()}) {
      const Shaped s = run(required, cut, step);
      EXPECT_EQ(s.content, "") << streamed << " " << step;
      EXPECT_EQ(s.message.content, "");
      ASSERT_GE(s.message.tool_calls.size(), 1u);
      EXPECT_EQ(s.message.tool_calls[0].name, "a");
      EXPECT_EQ(Json::parse(s.message.tool_calls[0].arguments), Json::parse(R"({"x": 1})"));
      // A whole body keeps only complete calls; a stream closes what it sent.
      EXPECT_EQ(s.message.tool_calls.size(), streamed ? 2u : 1u);
      for (const ToolCall& c : s.message.tool_calls) EXPECT_TRUE(Json::parse(c.arguments).is_object()) << c.arguments;
      ASSERT_EQ(s.calls.size(), s.message.tool_calls.size());
      EXPECT_EQ(shaped_finish_reason("length", s.message), "length");

      const Shaped n = run(named, cut_named, step);
      EXPECT_EQ(n.content, "");
      EXPECT_EQ(n.message.content, "");
      EXPECT_EQ(n.message.tool_calls.size(), streamed ? 1u : 0u);
      for (const ToolCall& c : n.message.tool_calls) EXPECT_TRUE(Json::parse(c.arguments).is_object()) << c.arguments;
      ASSERT_EQ(n.calls.size(), n.message.tool_calls.size());
      if (!n.calls.empty()) {
        EXPECT_EQ(n.calls[0]["arguments"], n.message.tool_calls[0].arguments);
      }
    }
  }
}

// The grammar lets a thinking model think before the forced JSON: the
// reasoning is split off first, and only the JSON becomes the calls.
TEST(ChatShaper, ForcedCallsAfterThinkingKeepTheReasoningOutOfTheCall) {
  ChatShape named = hermes_thinking();
  named.parse_tool_calls = false;
  named.forced = ForcedTools::kNamed;
  named.forced_name = "get_weather";
  const std::string named_text = "The user wants Oslo.\n</think>\n\n{\"city\": \"Oslo\"}";
  ChatShape required = hermes_thinking();
  required.starts_in_thinking = false;
  required.forced = ForcedTools::kRequired;
  const std::string required_text =
      "<think>\nTwo calls.\n</think>\n\n[{\"name\": \"a\", \"parameters\": {}}, {\"name\": \"b\", "
      "\"parameters\": {\"k\": true}}]";
  for (bool streamed : {true, false}) {
    named.stream_tool_calls = streamed;
    required.stream_tool_calls = streamed;
    for (size_t step : {size_t{1}, size_t{4}, size_t{1000}}) {
      const Shaped n = run(named, named_text, step);
      EXPECT_EQ(n.reasoning, "The user wants Oslo.") << streamed << " " << step;
      EXPECT_EQ(n.message.reasoning_content, "The user wants Oslo.");
      EXPECT_EQ(n.content, "");
      ASSERT_EQ(n.message.tool_calls.size(), 1u);
      EXPECT_EQ(Json::parse(n.message.tool_calls[0].arguments), Json::parse(R"({"city": "Oslo"})"));
      EXPECT_EQ(n.calls.at(0)["arguments"], n.message.tool_calls[0].arguments);
      EXPECT_EQ(shaped_finish_reason("stop", n.message), "tool_calls");

      const Shaped r = run(required, required_text, step);
      EXPECT_EQ(r.reasoning, "Two calls.");
      EXPECT_EQ(r.content, "");
      ASSERT_EQ(r.message.tool_calls.size(), 2u);
      EXPECT_EQ(r.message.tool_calls[1].name, "b");
      EXPECT_EQ(Json::parse(r.message.tool_calls[1].arguments), Json::parse(R"({"k": true})"));
      EXPECT_EQ(shaped_finish_reason("stop", r.message), "tool_calls");
    }
  }
}

// parallel_tool_calls false: a turn has at most one call, streamed or not.
TEST(ChatShaper, OneCallATurnDropsTheCallsAfterTheFirst) {
  ChatShape shape = hermes_thinking();
  shape.starts_in_thinking = false;
  shape.one_call = true;
  const std::string text = "<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>\n<tool_call>\n"
                           "{\"name\": \"b\", \"arguments\": {}}\n</tool_call>";
  ChatShape forced;
  forced.forced = ForcedTools::kRequired;
  forced.one_call = true;
  for (bool streamed : {true, false}) {
    shape.stream_tool_calls = streamed;
    forced.stream_tool_calls = streamed;
    for (size_t step : {size_t{1}, size_t{7}, text.size()}) {
      const Shaped s = run(shape, text, step);
      ASSERT_EQ(s.calls.size(), 1u) << streamed << " " << step;
      EXPECT_EQ(s.calls[0]["name"], "a");
      ASSERT_EQ(s.message.tool_calls.size(), 1u);
      EXPECT_EQ(shaped_finish_reason("stop", s.message), "tool_calls");
      const Shaped f = run(forced, R"([{"name": "a", "parameters": {}}, {"name": "b", "parameters": {}}])", step);
      EXPECT_EQ(f.calls.size(), 1u);
      EXPECT_EQ(f.message.tool_calls.size(), 1u);
    }
  }
  shape.one_call = false;
  EXPECT_EQ(run(shape, text, 3).message.tool_calls.size(), 2u);
}

TEST(ChatShaper, AMessageWithOnlyToolCallsHasNullContent) {
  ParsedMessage m;
  m.reasoning_content = "r";
  m.tool_calls.push_back(ToolCall{"call_1", "f", "{}"});
  const Json j = message_json(m);
  EXPECT_TRUE(j["content"].is_null());
  EXPECT_EQ(j["reasoning_content"], "r");
  EXPECT_EQ(j["tool_calls"][0]["function"]["name"], "f");
  EXPECT_EQ(j["tool_calls"][0]["type"], "function");
  ParsedMessage plain;
  plain.content = "hi";
  EXPECT_EQ(message_json(plain)["content"], "hi");
  EXPECT_FALSE(message_json(plain).contains("tool_calls"));
}

}  // namespace
}  // namespace met
