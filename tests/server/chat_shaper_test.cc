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

TEST(ChatShaper, AForcedRequiredArrayBecomesToolCallsAndACutOffOneStaysContent) {
  ChatShape shape;
  shape.forced = ForcedTools::kRequired;
  const Shaped s = run(shape, R"([{"name": "a", "parameters": {"x": 1}}, {"name": "b", "parameters": {}}])", 9);
  ASSERT_EQ(s.calls.size(), 2u);
  EXPECT_EQ(s.calls[1]["name"], "b");
  EXPECT_EQ(Json::parse(s.calls[0]["arguments"].get<std::string>()), Json::parse(R"({"x": 1})"));
  EXPECT_NE(s.calls[0]["id"], s.calls[1]["id"]);
  const Shaped cut = run(shape, R"([{"name": "a", "param)", 9);
  EXPECT_TRUE(cut.calls.empty());
  EXPECT_EQ(cut.content, R"([{"name": "a", "param)");
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
