// Families whose tool arguments are XML-like parameters converted to JSON:
// Qwen3-Coder (and Qwen3.5, Nemotron 3, Step 3.5), Seed-OSS, GLM 4.5-4.7,
// DeepSeek V3.2 (DSML) and MiniMax M2; each generation fed in every split.
#include <gtest/gtest.h>

#include "output_test_support.h"

namespace met {
namespace {

using testing::expect_message;
using testing::parse_every_way;
using testing::SplitCheck;

const ChatFormat kQwen3Coder{ChatFamily::kQwen3Coder, "", ""};
const ChatFormat kQwen35{ChatFamily::kQwen3Coder, "<think>", "</think>"};

TEST(Qwen3CoderFamily, ParametersBecomeJsonArgumentsWithTheirTypes) {
  const auto message = parse_every_way(kQwen3Coder,
      "<tool_call>\n<function=get_weather>\n<parameter=location>\nSan Francisco, CA\n</parameter>\n"
      "<parameter=days>\n3\n</parameter>\n<parameter=options>\n{\"metric\": true}\n</parameter>\n</function>\n"
      "</tool_call>");
  expect_message(message, "", "",
                 {{"get_weather", R"({"location": "San Francisco, CA", "days": 3, "options": {"metric": true}})"}},
                 true);
}

TEST(Qwen3CoderFamily, ParallelCallsAndContentBefore) {
  const auto message = parse_every_way(kQwen3Coder,
      "I'll read both files.\n<tool_call>\n<function=read_file>\n<parameter=path>\nsrc/main.cc\n</parameter>\n"
      "</function>\n</tool_call>\n<tool_call>\n<function=read_file>\n<parameter=path>\nREADME.md\n</parameter>\n"
      "</function>\n</tool_call>");
  expect_message(message, "", "I'll read both files.",
                 {{"read_file", R"({"path": "src/main.cc"})"}, {"read_file", R"({"path": "README.md"})"}}, true);
}

TEST(Qwen3CoderFamily, MultiLineStringValuesKeepTheirInnerNewlines) {
  const auto message = parse_every_way(kQwen3Coder,
      "<tool_call>\n<function=write_file>\n<parameter=content>\nline 1\nline 2\n</parameter>\n"
      "<parameter=zip>\n01234\n</parameter>\n</function>\n</tool_call>");
  expect_message(message, "", "", {{"write_file", R"({"content": "line 1\nline 2", "zip": "01234"})"}}, true);
}

TEST(Qwen3CoderFamily, ValuesThatLookLikeMarkupOrJsonSurviveEverySplit) {
  const auto message = parse_every_way(kQwen3Coder,
      "<tool_call>\n<function=edit>\n<parameter=old>\nif (a </param b) { x <- \"y\"; } // é 東 🎉\n\n</parameter>\n"
      "<parameter=flag>\ntrue\n</parameter>\n<parameter=text>\n tabbed\ttext\\ \n</parameter>\n</function>\n"
      "</tool_call>");
  expect_message(message, "", "",
                 {{"edit", R"({"old": "if (a </param b) { x <- \"y\"; } // é 東 🎉\n", "flag": true, "text": " tabbed\ttext\\ "})"}},
                 true);
}

TEST(Qwen3CoderFamily, CallWithoutParametersHasEmptyArguments) {
  expect_message(parse_every_way(kQwen3Coder, "<tool_call>\n<function=list_files>\n</function>\n</tool_call>"), "",
                 "", {{"list_files", "{}"}}, true);
}

TEST(Qwen3CoderFamily, ThinkingModelsSplitReasoningFirst) {
  const auto message = parse_every_way(kQwen35,
      "I need the file list first.\n</think>\n\n<tool_call>\n<function=list_files>\n<parameter=dir>\n.\n"
      "</parameter>\n</function>\n</tool_call>",
      testing::starts_in_thinking());
  expect_message(message, "I need the file list first.", "", {{"list_files", R"({"dir": "."})"}}, true);
}

TEST(Qwen3CoderFamily, MalformedCallWithoutFunctionIsContent) {
  SplitCheck check;
  check.content_is_clean = false;
  const std::string text = "<tool_call>\nget_weather(location=Paris)\n</tool_call>";
  expect_message(parse_every_way(kQwen3Coder, text, check), "", text, {}, false);
}

TEST(SeedOssFamily, SeedThinkAndSeedToolCall) {
  const ChatFormat seed{ChatFamily::kSeedOss, "<seed:think>", "</seed:think>"};
  const auto message = parse_every_way(seed,
      "<seed:think>The user wants the weather.</seed:think>Checking.\n<seed:tool_call>\n<function=get_weather>\n"
      "<parameter=location>Berlin</parameter>\n</function>\n</seed:tool_call>");
  expect_message(message, "The user wants the weather.", "Checking.", {{"get_weather", R"({"location": "Berlin"})"}},
                 true);
}

const ChatFormat kGlm{ChatFamily::kGlm45, "<think>", "</think>"};

TEST(GlmFamily, ArgKeyValuePairsBecomeJsonArguments) {
  const auto message = parse_every_way(kGlm,
      "\n<think>The user wants weather for two cities.</think>\nLet me check both.\n<tool_call>get_weather\n"
      "<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n<arg_key>days</arg_key>\n<arg_value>2</arg_value>\n"
      "</tool_call>\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Shanghai</arg_value>\n</tool_call>");
  expect_message(message, "The user wants weather for two cities.", "Let me check both.",
                 {{"get_weather", R"({"city": "Beijing", "days": 2})"}, {"get_weather", R"({"city": "Shanghai"})"}},
                 true);
}

TEST(GlmFamily, Glm47CompactFormWithThinkingFromThePrompt) {
  const auto message = parse_every_way(kGlm,
      "Search first.</think><tool_call>search<arg_key>query</arg_key><arg_value>met server</arg_value>"
      "<arg_key>filters</arg_key><arg_value>[\"docs\", \"code\"]</arg_value></tool_call>",
      testing::starts_in_thinking());
  expect_message(message, "Search first.", "", {{"search", R"({"query": "met server", "filters": ["docs", "code"]})"}},
                 true);
}

TEST(GlmFamily, MalformedCallWithoutNameIsContent) {
  SplitCheck check;
  check.content_is_clean = false;
  const std::string text = "<tool_call><arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>";
  expect_message(parse_every_way(kGlm, text, check), "", text, {}, false);
}

TEST(DeepSeekV32Family, DsmlInvokesWithStringAndJsonParameters) {
  const ChatFormat v32{ChatFamily::kDeepSeekV32, "<think>", "</think>"};
  const auto message = parse_every_way(v32,
      "The user wants Paris weather.</think>Sure.\n\n<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"get_weather\">\n"
      "<｜DSML｜parameter name=\"location\" string=\"true\">Paris</｜DSML｜parameter>\n"
      "<｜DSML｜parameter name=\"days\" string=\"false\">3</｜DSML｜parameter>\n</｜DSML｜invoke>\n"
      "<｜DSML｜invoke name=\"get_time\">\n<｜DSML｜parameter name=\"zone\" string=\"true\">42</｜DSML｜parameter>\n"
      "</｜DSML｜invoke>\n</｜DSML｜function_calls>",
      testing::starts_in_thinking());
  expect_message(message, "The user wants Paris weather.", "Sure.",
                 {{"get_weather", R"({"location": "Paris", "days": 3})"}, {"get_time", R"({"zone": "42"})"}}, true);
}

TEST(MiniMaxFamily, InvokeBlocksInsideMinimaxToolCall) {
  const ChatFormat minimax{ChatFamily::kMiniMaxM2, "<think>", "</think>"};
  const auto message = parse_every_way(minimax,
      "<think>\nNeed to search.\n</think>\n\n<minimax:tool_call>\n<invoke name=\"search\">\n"
      "<parameter name=\"query\">latest news</parameter>\n<parameter name=\"limit\">5</parameter>\n</invoke>\n"
      "</minimax:tool_call>");
  expect_message(message, "Need to search.", "", {{"search", R"({"query": "latest news", "limit": 5})"}}, true);
}

}  // namespace
}  // namespace met
