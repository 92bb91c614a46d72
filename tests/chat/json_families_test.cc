// Families whose tool arguments are JSON after their own markers: Llama 3.x,
// Mistral (old list and new [ARGS] forms), DeepSeek R1 and V3.1, Kimi K2,
// Functionary v3.1 and v3.2, Command R and R7B, Apriel; each generation fed
// in every split.
#include <gtest/gtest.h>

#include "output_test_support.h"

namespace met {
namespace {

using testing::expect_message;
using testing::parse_every_way;
using testing::SplitCheck;

SplitCheck malformed() {
  SplitCheck check;
  check.content_is_clean = false;
  return check;
}

const ChatFormat kLlama3{ChatFamily::kLlama3, "", ""};

TEST(Llama3Family, BareJsonObjectIsACall) {
  expect_message(parse_every_way(kLlama3,
                     "{\"name\": \"get_weather\", \"parameters\": {\"location\": \"New York\", \"unit\": \"f\"}}"),
                 "", "", {{"get_weather", R"({"location": "New York", "unit": "f"})"}}, true);
}

TEST(Llama3Family, PythonTagOpensACall) {
  expect_message(parse_every_way(kLlama3, "<|python_tag|>{\"name\": \"search\", \"parameters\": {\"q\": \"llamas\"}}"),
                 "", "", {{"search", R"({"q": "llamas"})"}}, true);
}

TEST(Llama3Family, ConsecutiveObjectsAreParallelCalls) {
  expect_message(parse_every_way(kLlama3,
                     "{\"name\": \"a\", \"parameters\": {\"x\": 1}}\n{\"name\": \"b\", \"parameters\": {}}"),
                 "", "", {{"a", R"({"x": 1})"}, {"b", "{}"}}, true);
}

TEST(Llama3Family, JsonThatIsNoCallStaysContent) {
  const std::string text = "{\"name\": \"Bob\", \"age\": 42}";
  expect_message(parse_every_way(kLlama3, text, malformed()), "", text, {}, false);
}

TEST(Llama3Family, PlainTextIsNotDelayed) {
  expect_message(parse_every_way(kLlama3, "The capital of France is Paris. {braces} stay."), "",
                 "The capital of France is Paris. {braces} stay.", {}, false);
}

const ChatFormat kMistral{ChatFamily::kMistral, "", ""};

TEST(MistralFamily, NemoListOfCalls) {
  expect_message(parse_every_way(kMistral,
                     "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}, \"id\": "
                     "\"abc123def\"}, {\"name\": \"get_time\", \"arguments\": {}}]"),
                 "", "", {{"get_weather", R"({"city": "Paris"})"}, {"get_time", "{}"}}, true);
}

TEST(MistralFamily, NameArgsFormWithCallIds) {
  expect_message(parse_every_way(kMistral,
                     "Checking.[TOOL_CALLS]get_weather[CALL_ID]a1b2c3d4e[ARGS]{\"city\": \"Lyon\"}"
                     "[TOOL_CALLS]get_time[ARGS]{\"tz\": \"CET\"}"),
                 "", "Checking.", {{"get_weather", R"({"city": "Lyon"})"}, {"get_time", R"({"tz": "CET"})"}}, true);
}

TEST(MistralFamily, MinistralThinksInThinkBrackets) {
  const ChatFormat ministral{ChatFamily::kMistral, "[THINK]", "[/THINK]"};
  expect_message(parse_every_way(ministral,
                     "[THINK]The user wants the weather; call the tool.[/THINK][TOOL_CALLS]get_weather[ARGS]{\"city\": "
                     "\"Nice\"}"),
                 "The user wants the weather; call the tool.", "", {{"get_weather", R"({"city": "Nice"})"}}, true);
}

SplitCheck malformed_unstreamed() {
  SplitCheck check = malformed();
  check.options.stream_tool_calls = false;
  return check;
}

TEST(MistralFamily, MalformedArgumentsAreContentWhenCallsAreNotStreamed) {
  const std::string text = "[TOOL_CALLS]get_weather[ARGS]{\"city\": Paris}";
  expect_message(parse_every_way(kMistral, text, malformed_unstreamed()), "", text, {}, false);
}

TEST(MistralFamily, MalformedStreamedCallKeepsItsSafePrefixAndItsMarkupAsContent) {
  const std::string text = "[TOOL_CALLS]get_weather[ARGS]{\"unit\": \"c\", \"city\": Paris}";
  expect_message(parse_every_way(kMistral, text, malformed()), "", text, {{"get_weather", R"({"unit": "c"})"}}, false);
}

const ChatFormat kR1{ChatFamily::kDeepSeekR1, "<think>", "</think>"};

TEST(DeepSeekR1Family, ReasoningThenFencedJsonCalls) {
  const auto message = parse_every_way(kR1,
      "Okay, I need the weather in two cities.\n</think>\n\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function"
      "<｜tool▁sep｜>get_weather\n```json\n{\"location\": \"Hangzhou\"}\n```<｜tool▁call▁end｜>\n"
      "<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"location\": \"Beijing\"}\n```"
      "<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
      testing::starts_in_thinking());
  expect_message(message, "Okay, I need the weather in two cities.", "",
                 {{"get_weather", R"({"location": "Hangzhou"})"}, {"get_weather", R"({"location": "Beijing"})"}}, true);
}

TEST(DeepSeekR1Family, ReasoningThenAnswer) {
  expect_message(parse_every_way(kR1, "用户在问好。\n</think>\n\n你好！有什么可以帮你？", testing::starts_in_thinking()), "用户在问好。",
                 "你好！有什么可以帮你？", {}, false);
}

TEST(DeepSeekR1Family, MalformedCallIsContent) {
  const std::string text = "<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{oops\n```<｜tool▁call▁end｜>";
  expect_message(parse_every_way(kR1, text, malformed_unstreamed()), "", text, {}, false);
  expect_message(parse_every_way(kR1, text, malformed()), "", text, {{"f", "{}"}}, false);
}

TEST(DeepSeekR1Family, CallCutOffMidArgumentsIsNoToolCallTurn) {
  const std::string text = "<｜tool▁call▁begin｜>function<｜tool▁sep｜>rm\n```json\n{\"path\": \"/tmp/a\", \"force\": tr";
  expect_message(parse_every_way(kR1, text, malformed_unstreamed()), "", text, {}, false);
  expect_message(parse_every_way(kR1, text, malformed()), "", text, {{"rm", R"({"path": "/tmp/a"})"}}, false);
}

TEST(DeepSeekV31Family, NameSepArguments) {
  const ChatFormat v31{ChatFamily::kDeepSeekV31, "<think>", "</think>"};
  expect_message(parse_every_way(v31,
                     "Let me check.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"location\": "
                     "\"Tokyo\"}<｜tool▁call▁end｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{}<｜tool▁call▁end｜>"
                     "<｜tool▁calls▁end｜>"),
                 "", "Let me check.", {{"get_weather", R"({"location": "Tokyo"})"}, {"get_time", "{}"}}, true);
}

TEST(KimiK2Family, SectionOfNumberedCalls) {
  const ChatFormat kimi{ChatFamily::kKimiK2, "<think>", "</think>"};
  expect_message(parse_every_way(kimi,
                     "<think>Two lookups needed.</think>I'll look both up.<|tool_calls_section_begin|>"
                     "<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Beijing\"}"
                     "<|tool_call_end|><|tool_call_begin|>functions.get_time:1<|tool_call_argument_begin|>{}"
                     "<|tool_call_end|><|tool_calls_section_end|>"),
                 "Two lookups needed.", "I'll look both up.", {{"get_weather", R"({"city": "Beijing"})"}, {"get_time", "{}"}},
                 true);
}

TEST(FunctionaryV31Family, FunctionTagsAndPythonTag) {
  const ChatFormat v31{ChatFamily::kFunctionaryV31, "", ""};
  expect_message(parse_every_way(v31,
                     "<function=get_weather>{\"location\": \"Rome\"}</function><function=get_time>{}</function>"),
                 "", "", {{"get_weather", R"({"location": "Rome"})"}, {"get_time", "{}"}}, true);
  expect_message(parse_every_way(v31, "<|python_tag|>print(1 + 1)"), "", "", {{"python", R"j({"code": "print(1 + 1)"})j"}},
                 true);
}

const ChatFormat kFunctionaryV32{ChatFamily::kFunctionaryV32, "", ""};

TEST(FunctionaryV32Family, AllIsContentAndNamesAreCalls) {
  expect_message(parse_every_way(kFunctionaryV32,
                     "all\nLet me check the weather.>>>get_weather\n{\"location\": \"Madrid\"}>>>get_time\n{}"),
                 "", "Let me check the weather.", {{"get_weather", R"({"location": "Madrid"})"}, {"get_time", "{}"}},
                 true);
}

// The names of the calls a parser announces (ToolCallBegin) while `text`
// streams in one character at a time.
std::vector<std::string> announced(const ChatFormat& format, std::string_view text, const ParserOptions& o) {
  std::unique_ptr<OutputParser> parser = make_output_parser(format, o);
  std::vector<ParseEvent> events;
  for (char c : text) parser->feed(std::string_view(&c, 1), events);
  (void)parser->finish(events);
  std::vector<std::string> names;
  for (const ParseEvent& e : events) {
    if (const auto* b = std::get_if<ToolCallBegin>(&e)) names.push_back(b->name);
  }
  return names;
}

TEST(FunctionaryV32Family, AStreamedCallIsAnnouncedOnlyOnceItNamesATool) {
  ParserOptions o;
  o.tool_names = {"get_weather"};
  // A line of story text is no call: nothing is announced, streamed or not.
  EXPECT_TRUE(announced(kFunctionaryV32, "Once upon a time\nthere was a dog.", o).empty());
  EXPECT_TRUE(announced(kFunctionaryV32, "Once upon a time\n{\"a\": 1}", o).empty());  // not a tool's name
  EXPECT_EQ(announced(kFunctionaryV32, "get_weather\n{\"location\": \"Madrid\"}", o),
            std::vector<std::string>{"get_weather"});
  o.tool_names.clear();  // no list: the arguments must have begun
  EXPECT_TRUE(announced(kFunctionaryV32, "Once upon a time\nthere was a dog.", o).empty());
}

TEST(FunctionaryV32Family, PlainAnswer) {
  expect_message(parse_every_way(kFunctionaryV32, "all\nHello there!"), "", "Hello there!", {}, false);
}

TEST(CommandRFamily, ActionBlockWithFencedList) {
  const ChatFormat command_r{ChatFamily::kCommandR, "", ""};
  expect_message(parse_every_way(command_r,
                     "Action: ```json\n[\n    {\n        \"tool_name\": \"internet_search\",\n        \"parameters\": "
                     "{\n            \"query\": \"biggest penguin\"\n        }\n    }\n]\n```"),
                 "", "", {{"internet_search", R"({"query": "biggest penguin"})"}}, true);
}

TEST(CommandR7BFamily, ThinkingActionAndResponseMarkers) {
  const ChatFormat r7b{ChatFamily::kCommandR7B, "<|START_THINKING|>", "<|END_THINKING|>"};
  expect_message(parse_every_way(r7b,
                     "<|START_THINKING|>I will search.<|END_THINKING|><|START_ACTION|>[\n    {\"tool_call_id\": \"0\", "
                     "\"tool_name\": \"search\", \"parameters\": {\"q\": \"penguins\"}}\n]<|END_ACTION|>"),
                 "I will search.", "", {{"search", R"({"q": "penguins"})"}}, true);
  expect_message(parse_every_way(r7b, "<|START_RESPONSE|>Penguins are birds.<|END_RESPONSE|>"), "",
                 "Penguins are birds.", {}, false);
}

TEST(AprielFamily, ToolCallsList) {
  const ChatFormat apriel{ChatFamily::kApriel, "", ""};
  expect_message(parse_every_way(apriel,
                     "Sure.\n<tool_calls>[{\"name\": \"f\", \"arguments\": {\"a\": 1}}, {\"name\": \"g\", \"arguments\": "
                     "{}}]</tool_calls>"),
                 "", "Sure.", {{"f", R"({"a": 1})"}, {"g", "{}"}}, true);
}

}  // namespace
}  // namespace met
