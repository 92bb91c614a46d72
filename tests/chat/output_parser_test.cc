// OutputParser's streaming contract, watched delta by delta: text is held
// back only while a marker may be starting, never longer; partial markers
// never leak; finish flushes what was held.
#include "chat/output/output_parser.h"

#include <gtest/gtest.h>

#include "output_test_support.h"

namespace met {
namespace {

const ChatFormat kQwen3{ChatFamily::kHermes, "<think>", "</think>"};

// The events one feed produced, merged.
std::vector<ParseEvent> feed(OutputParser& parser, std::string_view delta) {
  std::vector<ParseEvent> events;
  parser.feed(delta, events);
  return testing::merge_events(events);
}

std::vector<ParseEvent> content(std::string text) { return {ContentDelta{std::move(text)}}; }

TEST(OutputParser, PlainTextPassesThroughAtOnce) {
  auto parser = make_output_parser(kQwen3, {});
  EXPECT_EQ(feed(*parser, "Hello"), content("Hello"));
  EXPECT_EQ(feed(*parser, ", world"), content(", world"));
}

TEST(OutputParser, APossibleMarkerIsHeldUntilDecided) {
  auto parser = make_output_parser(kQwen3, {});
  EXPECT_EQ(feed(*parser, "a <tool"), content("a"));
  EXPECT_EQ(feed(*parser, "box> b"), content(" <toolbox> b"));
}

TEST(OutputParser, AMarkerSplitAcrossDeltasNeverLeaks) {
  auto parser = make_output_parser(kQwen3, {});
  EXPECT_EQ(feed(*parser, "Sure.<tool_"), content("Sure."));
  EXPECT_TRUE(feed(*parser, "call>{\"name\": \"f\", ").empty());
  const std::vector<ParseEvent> events = feed(*parser, "\"arguments\": {}}</tool_call>");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(std::get<ToolCallBegin>(events[0]).name, "f");
  EXPECT_EQ(std::get<ToolCallArgumentsDelta>(events[1]).text, "{}");
}

TEST(OutputParser, ReasoningStreamsAndStopsAtThinkEnd) {
  ParserOptions options;
  options.starts_in_thinking = true;
  auto parser = make_output_parser(kQwen3, options);
  EXPECT_EQ(feed(*parser, "step one"), (std::vector<ParseEvent>{ReasoningDelta{"step one"}}));
  EXPECT_EQ(feed(*parser, ", two</th"), (std::vector<ParseEvent>{ReasoningDelta{", two"}}));
  EXPECT_EQ(feed(*parser, "ink>\n\nDone"), content("Done"));
}

const ChatFormat kQwen3Coder{ChatFamily::kQwen3Coder, "", ""};

TEST(OutputParser, XmlCallsStreamTheirArgumentsBeforeTheyClose) {
  auto parser = make_output_parser(kQwen3Coder, {});
  const std::vector<ParseEvent> begun = feed(*parser,
      "<tool_call>\n<function=write_file>\n<parameter=path>\na.txt\n</parameter>\n<parameter=content>\nHello wor");
  ASSERT_EQ(begun.size(), 2u);
  EXPECT_EQ(std::get<ToolCallBegin>(begun[0]).name, "write_file");
  EXPECT_EQ(std::get<ToolCallArgumentsDelta>(begun[1]).text, R"({"path":"a.txt","content":"Hello wor)");
  EXPECT_EQ(feed(*parser, "ld\n"), (std::vector<ParseEvent>{ToolCallArgumentsDelta{0, "ld"}}));
  EXPECT_EQ(feed(*parser, "</parameter>\n<parameter=n>\n1"), (std::vector<ParseEvent>{ToolCallArgumentsDelta{0, "\""}}));
  EXPECT_EQ(feed(*parser, "2\n</parameter>\n</function>\n</tool_call>"),
            (std::vector<ParseEvent>{ToolCallArgumentsDelta{0, R"(,"n":12})"}}));
  std::vector<ParseEvent> events;
  const ParsedMessage message = parser->finish(events);
  EXPECT_EQ(message.tool_calls.at(0).arguments, R"({"path":"a.txt","content":"Hello world","n":12})");
  EXPECT_TRUE(message.ended_with_tool_call);
}

TEST(OutputParser, AStreamedCallThatTurnsMalformedIsClosedAndKeptAsContent) {
  const std::string text = "<tool_call><function=f><parameter=a>x y</parameter><parameter=b";
  const auto message = testing::parse_every_way(kQwen3Coder, text, {{}, false});
  testing::expect_message(message, "", text, {{"f", R"({"a": "x y"})"}}, false);
}

TEST(OutputParser, JsonArgumentsStreamAsTheyBecomeSafe) {
  auto parser = make_output_parser(ChatFormat{ChatFamily::kDeepSeekV31, "", ""}, {});
  const std::vector<ParseEvent> begun = feed(*parser, "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>write<｜tool▁sep｜>{\"n\": 1");
  ASSERT_EQ(begun.size(), 2u);
  EXPECT_EQ(std::get<ToolCallBegin>(begun[0]).name, "write");
  EXPECT_EQ(std::get<ToolCallArgumentsDelta>(begun[1]).text, "{");
  EXPECT_EQ(feed(*parser, ", \"text\": \"Hel"), (std::vector<ParseEvent>{ToolCallArgumentsDelta{0, R"("n": 1, "text": "Hel)"}}));
  EXPECT_EQ(feed(*parser, "lo\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"),
            (std::vector<ParseEvent>{ToolCallArgumentsDelta{0, R"(lo"})"}}));
  std::vector<ParseEvent> events;
  EXPECT_EQ(parser->finish(events).tool_calls.at(0).arguments, R"({"n": 1, "text": "Hello"})");
}

TEST(OutputParser, UnstreamedCallsAppearWhole) {
  ParserOptions options;
  options.stream_tool_calls = false;
  auto parser = make_output_parser(ChatFormat{ChatFamily::kDeepSeekV31, "", ""}, options);
  EXPECT_TRUE(feed(*parser, "<｜tool▁call▁begin｜>write<｜tool▁sep｜>{\"text\": \"Hel").empty());
  EXPECT_EQ(feed(*parser, "lo\"}<｜tool▁call▁end｜>").size(), 2u);
}

TEST(OutputParser, FinishFlushesAHeldPartialMarkerAsText) {
  auto parser = make_output_parser(kQwen3, {});
  std::vector<ParseEvent> events;
  parser->feed("x <tool_ca", events);
  const ParsedMessage message = parser->finish(events);
  EXPECT_EQ(message.content, "x <tool_ca");
  EXPECT_FALSE(message.ended_with_tool_call);
}

TEST(OutputParser, GenericFormatLeavesTextUntouched) {
  auto parser = make_output_parser(ChatFormat{}, {});
  std::vector<ParseEvent> events;
  parser->feed("  <think>x</think> <tool_call>  \n", events);
  EXPECT_EQ(parser->finish(events).content, "  <think>x</think> <tool_call>  \n");
}

TEST(OutputParser, ThinkingSplitHoldsAtEveryByteBoundary) {
  ParserOptions options;
  options.starts_in_thinking = true;
  const auto message =
      testing::parse_every_way(kQwen3, "Plan: say hi in Français — «bonjour».\n</think>\n\nBonjour ! 👋", {options, true});
  testing::expect_message(message, "Plan: say hi in Français — «bonjour».", "Bonjour ! 👋", {}, false);
}

TEST(OutputParser, ThinkingWithoutEndMarkerIsAllReasoningInEverySplit) {
  const auto message = testing::parse_every_way(kQwen3, "<think>\nStill thinking about </thi");
  testing::expect_message(message, "Still thinking about </thi", "", {}, false);
}

}  // namespace
}  // namespace met
