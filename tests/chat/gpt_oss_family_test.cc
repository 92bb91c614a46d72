// GPT-OSS harmony output: analysis channel as reasoning, commentary to a
// function as a tool call, final channel as content; fed in every split.
#include <gtest/gtest.h>

#include "output_test_support.h"

namespace met {
namespace {

using testing::expect_message;
using testing::parse_every_way;
using testing::SplitCheck;

const ChatFormat kGptOss{ChatFamily::kGptOss, "<|channel|>analysis<|message|>", "<|end|>"};

TEST(GptOssFamily, AnalysisThenFinal) {
  expect_message(parse_every_way(kGptOss,
                     "<|channel|>analysis<|message|>User says hi. Respond politely.<|end|><|start|>assistant"
                     "<|channel|>final<|message|>Hello! How can I help?<|return|>"),
                 "User says hi. Respond politely.", "Hello! How can I help?", {}, false);
}

TEST(GptOssFamily, AnalysisThenToolCall) {
  expect_message(parse_every_way(kGptOss,
                     "<|channel|>analysis<|message|>Need weather. Call get_weather.<|end|><|start|>assistant"
                     "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"location\":\"San "
                     "Francisco\"}<|call|>"),
                 "Need weather. Call get_weather.", "", {{"get_weather", R"({"location": "San Francisco"})"}}, true);
}

TEST(GptOssFamily, RecipientBeforeChannelAndParallelCalls) {
  expect_message(parse_every_way(kGptOss,
                     "<|channel|>commentary to=functions.a <|constrain|>json<|message|>{\"x\": 1}<|call|>"
                     "<|start|>assistant to=functions.b<|channel|>commentary json<|message|>{}<|call|>"),
                 "", "", {{"a", R"({"x": 1})"}, {"b", "{}"}}, true);
}

TEST(GptOssFamily, CommentaryPreambleIsContent) {
  expect_message(parse_every_way(kGptOss,
                     "<|channel|>commentary<|message|>Checking the weather now.<|end|><|start|>assistant<|channel|>"
                     "commentary to=functions.get_weather<|message|>{\"city\": \"Oslo\"}<|call|>"),
                 "", "Checking the weather now.", {{"get_weather", R"({"city": "Oslo"})"}}, true);
}

TEST(GptOssFamily, FinalWithoutReturnTokenEndsAtFinish) {
  expect_message(parse_every_way(kGptOss, "<|channel|>final<|message|>42"), "", "42", {}, false);
}

TEST(GptOssFamily, MalformedCallArgumentsAreContent) {
  const std::string text = "<|channel|>commentary to=functions.f <|constrain|>json<|message|>{broken<|call|>";
  const std::string kept = "<|channel|>commentary to=functions.f <|constrain|>json<|message|>{broken";
  SplitCheck check;
  check.content_is_clean = false;
  check.options.stream_tool_calls = false;
  expect_message(parse_every_way(kGptOss, text, check), "", kept, {}, false);
  check.options.stream_tool_calls = true;
  expect_message(parse_every_way(kGptOss, text, check), "", kept, {{"f", "{}"}}, false);
}

TEST(GptOssFamily, CallArgumentsStreamBeforeTheCallEnds) {
  auto parser = make_output_parser(kGptOss, {});
  std::vector<ParseEvent> events;
  parser->feed("<|channel|>commentary to=functions.search <|constrain|>json<|message|>{\"q\": \"weather in", events);
  const auto merged = testing::merge_events(events);
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(std::get<ToolCallBegin>(merged[0]).name, "search");
  EXPECT_EQ(std::get<ToolCallArgumentsDelta>(merged[1]).text, R"({"q": "weather in)");
}

// met opens the analysis message in the prompt when it controls the
// reasoning (a thinking budget, a forced tool call, a grammar).
TEST(GptOssFamily, APromptThatOpenedAnalysisStartsInReasoning) {
  expect_message(parse_every_way(kGptOss,
                     "Short.<|end|><|start|>assistant<|channel|>final<|message|>Hi.<|return|>",
                     testing::starts_in_thinking()),
                 "Short.", "Hi.", {}, false);
  expect_message(parse_every_way(kGptOss,
                     "Call it.<|end|><|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json"
                     "<|message|>{\"a\": 1}",
                     testing::starts_in_thinking()),
                 "Call it.", "", {{"f", R"({"a": 1})"}}, true);
}

TEST(GptOssFamily, TextWithoutHarmonyMarkupIsContent) {
  expect_message(parse_every_way(kGptOss, "Just plain text."), "", "Just plain text.", {}, false);
}

}  // namespace
}  // namespace met
