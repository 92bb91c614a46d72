// Hermes / Qwen2.5 / Qwen3 output: <think> reasoning and
// <tool_call>{"name", "arguments"}</tool_call> calls, each generation fed in
// every split (see output_test_support.h).
#include <gtest/gtest.h>

#include "output_test_support.h"

namespace met {
namespace {

using testing::expect_message;
using testing::parse_every_way;
using testing::SplitCheck;

const ChatFormat kQwen3{ChatFamily::kHermes, "<think>", "</think>"};

TEST(HermesFamily, ReasoningThenContentWhenThePromptOpenedThinking) {
  const auto message = parse_every_way(kQwen3,
      "Okay, the user just says hi. I should greet them back.\n</think>\n\nHello! How can I help you today? 😊",
      testing::starts_in_thinking());
  expect_message(message, "Okay, the user just says hi. I should greet them back.",
                 "Hello! How can I help you today? 😊", {}, false);
}

TEST(HermesFamily, ReasoningOpenedByTheModelItself) {
  const auto message = parse_every_way(kQwen3, "<think>\nLet me think: 2 + 2 = 4.\n</think>\n\nThe answer is 4.");
  expect_message(message, "Let me think: 2 + 2 = 4.", "The answer is 4.", {}, false);
}

TEST(HermesFamily, AThinkStartRepeatedAfterThePromptsIsDropped) {
  const auto message = parse_every_way(kQwen3, "<think>\nHmm.\n</think>\n\nHi.", testing::starts_in_thinking());
  expect_message(message, "Hmm.", "Hi.", {}, false);
}

TEST(HermesFamily, MissingThinkEndLeavesEverythingAsReasoning) {
  const auto message = parse_every_way(kQwen3, "The user wants a poem. Let me count syllables: five, seven", testing::starts_in_thinking());
  expect_message(message, "The user wants a poem. Let me count syllables: five, seven", "", {}, false);
}

TEST(HermesFamily, SingleCallEndsTheTurnWithAToolCall) {
  const auto message = parse_every_way(kQwen3,
      "<think>\nThe user asks for the weather in Paris; I have get_weather.\n</think>\n\n"
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris, France\", \"unit\": "
      "\"celsius\"}}\n</tool_call>");
  expect_message(message, "The user asks for the weather in Paris; I have get_weather.", "",
                 {{"get_weather", R"({"location": "Paris, France", "unit": "celsius"})"}}, true);
}

TEST(HermesFamily, ParallelCallsGetIndexesInOrder) {
  const auto message = parse_every_way(kQwen3,
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Tokyo\"}}\n</tool_call>\n"
      "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"timezone\": \"Asia/Tokyo\"}}\n</tool_call>");
  expect_message(message, "", "",
                 {{"get_weather", R"({"location": "Tokyo"})"}, {"get_time", R"({"timezone": "Asia/Tokyo"})"}}, true);
  EXPECT_NE(message.tool_calls[0].id, message.tool_calls[1].id);
}

TEST(HermesFamily, ContentBeforeACallStaysContent) {
  const auto message = parse_every_way(kQwen3,
      "Let me look that up for you.\n\n<tool_call>\n{\"name\": \"search\", \"arguments\": {\"query\": \"東京 天気\"}}\n"
      "</tool_call>");
  expect_message(message, "", "Let me look that up for you.", {{"search", R"({"query": "東京 天気"})"}}, true);
}

TEST(HermesFamily, ContentAfterACallMeansTheTurnDidNotEndWithIt) {
  const auto message = parse_every_way(kQwen3,
      "<tool_call>\n{\"name\": \"ping\", \"arguments\": {}}\n</tool_call>\nDone.");
  expect_message(message, "", "Done.", {{"ping", "{}"}}, false);
}

TEST(HermesFamily, CallCutOffBeforeItsEndMarkerIsStillACall) {
  const auto message = parse_every_way(kQwen3,
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Oslo\"}}\n");
  expect_message(message, "", "", {{"get_weather", R"({"location": "Oslo"})"}}, true);
}

TEST(HermesFamily, MalformedCallIsKeptVerbatimAsContent) {
  const std::string text =
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": }\n</tool_call>";
  SplitCheck check;
  check.content_is_clean = false;
  const auto message = parse_every_way(kQwen3, text, check);
  expect_message(message, "", text, {}, false);
}

TEST(HermesFamily, MalformedCallDoesNotStopTheNextOne) {
  SplitCheck check;
  check.content_is_clean = false;
  const auto message = parse_every_way(kQwen3,
      "<tool_call>\nnot json\n</tool_call>\n<tool_call>\n{\"name\": \"ok\", \"arguments\": {\"a\": 1}}\n</tool_call>",
      check);
  expect_message(message, "", "<tool_call>\nnot json\n</tool_call>", {{"ok", R"({"a": 1})"}}, true);
}

TEST(HermesFamily, ArgumentsGivenAsAJsonStringAreUnwrapped) {
  const auto message = parse_every_way(kQwen3,
      "<tool_call>\n{\"name\": \"f\", \"arguments\": \"{\\\"x\\\": [1, 2]}\"}\n</tool_call>");
  expect_message(message, "", "", {{"f", R"({"x": [1, 2]})"}}, true);
}

TEST(HermesFamily, WithoutToolsTheMarkupIsPlainContent) {
  SplitCheck check;
  check.options.parse_tool_calls = false;
  check.content_is_clean = false;
  const std::string text = "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>";
  expect_message(parse_every_way(kQwen3, text, check), "", text, {}, false);
}

TEST(HermesFamily, Qwen25WithoutThinkMarkersKeepsThinkTagsAsContent) {
  const ChatFormat qwen25{ChatFamily::kHermes, "", ""};
  SplitCheck check;
  check.content_is_clean = false;
  expect_message(parse_every_way(qwen25, "<think>x</think> y", check), "", "<think>x</think> y", {}, false);
}

TEST(HermesFamily, TheSameSeedGivesTheSameIds) {
  ParserOptions options;
  options.id_seed = 42;
  std::vector<ParseEvent> events;
  auto first = make_output_parser(kQwen3, options);
  first->feed("<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>", events);
  auto second = make_output_parser(kQwen3, options);
  second->feed("<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>", events);
  EXPECT_EQ(first->finish(events).tool_calls, second->finish(events).tool_calls);
}

}  // namespace
}  // namespace met
