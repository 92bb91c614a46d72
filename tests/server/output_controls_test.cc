// Tests for the output controls: which grammar a request's fields compile
// to, and what it accepts.
#include "server/output_controls.h"

#include <gtest/gtest.h>

#include "grammar/grammar_matcher.h"
#include "testing/test_tokenizer.h"

namespace met {
namespace {

using Json = nlohmann::ordered_json;

AgentFields with_tools(ToolChoice choice, std::string name = "") {
  AgentFields a;
  a.tools = Json::parse(R"([
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
      "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "get_time"}}])");
  a.tool_choice = choice;
  a.tool_choice_name = std::move(name);
  return a;
}

std::shared_ptr<const Grammar> grammar_of(const AgentFields& a) {
  auto g = build_output_grammar(a);
  if (auto* e = std::get_if<ApiError>(&g)) ADD_FAILURE() << e->message;
  return std::holds_alternative<ApiError>(g) ? nullptr : std::get<std::shared_ptr<const Grammar>>(g);
}

// Whether the grammar takes `text` whole.
bool accepts(const Grammar& g, std::string_view text) {
  static const TokenTrie trie = TokenTrie::build(testing::test_tokenizer());
  GrammarMatcher m(g, trie);
  return m.accept_bytes(text) && m.is_accepting();
}

TEST(OutputControls, NoConstraintNoGrammar) {
  EXPECT_EQ(grammar_of(AgentFields{}), nullptr);
  EXPECT_EQ(grammar_of(with_tools(ToolChoice::kAuto)), nullptr);
}

TEST(OutputControls, JsonObjectSchemaAndGbnfCompile) {
  AgentFields a;
  a.constraint = OutputConstraint::kJsonObject;
  EXPECT_TRUE(accepts(*grammar_of(a), R"({"k": [1, 2]})"));
  EXPECT_FALSE(accepts(*grammar_of(a), "[1]"));
  a.constraint = OutputConstraint::kJsonSchema;
  a.schema = Json::parse(R"({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})");
  a.strict = true;
  EXPECT_TRUE(accepts(*grammar_of(a), R"({"n": 5})"));
  EXPECT_FALSE(accepts(*grammar_of(a), R"({"n": "5"})"));
  a.constraint = OutputConstraint::kGbnf;
  a.gbnf = R"(root ::= "yes" | "no")";
  EXPECT_TRUE(accepts(*grammar_of(a), "no"));
  EXPECT_FALSE(accepts(*grammar_of(a), "maybe"));
}

TEST(OutputControls, AGrammarThatDoesNotCompileIsA400WithTheReason) {
  AgentFields a;
  a.constraint = OutputConstraint::kGbnf;
  a.gbnf = "root ::= undefined-rule";
  auto g = build_output_grammar(a);
  ASSERT_TRUE(std::holds_alternative<ApiError>(g));
  EXPECT_EQ(std::get<ApiError>(g).param, "grammar");
  EXPECT_NE(std::get<ApiError>(g).message.find("undefined"), std::string::npos) << std::get<ApiError>(g).message;
  a.constraint = OutputConstraint::kJsonSchema;
  a.schema = Json::parse(R"({"type": "object", "not": {}})");
  g = build_output_grammar(a);
  ASSERT_TRUE(std::holds_alternative<ApiError>(g));
  EXPECT_EQ(std::get<ApiError>(g).param, "response_format");
}

TEST(OutputControls, ANamedToolChoiceForcesTheFunctionsArguments) {
  const auto g = grammar_of(with_tools(ToolChoice::kNamed, "get_weather"));
  EXPECT_TRUE(accepts(*g, R"({"city": "Paris"})"));
  EXPECT_FALSE(accepts(*g, R"({"town": "Paris"})"));
  EXPECT_FALSE(accepts(*g, R"({})")) << "city is required";
}

TEST(OutputControls, RequiredForcesAnArrayOfCallsToTheGivenTools) {
  const auto g = grammar_of(with_tools(ToolChoice::kRequired));
  EXPECT_TRUE(accepts(*g, R"([{"name": "get_weather", "parameters": {"city": "Rome"}}])"));
  EXPECT_TRUE(accepts(*g, R"([{"name": "get_time", "parameters": {}}, {"name": "get_time", "parameters": {}}])"));
  EXPECT_FALSE(accepts(*g, "[]")) << "at least one call";
  EXPECT_FALSE(accepts(*g, R"([{"name": "launch", "parameters": {}}])"));
  AgentFields one = with_tools(ToolChoice::kRequired);
  one.parallel_tool_calls = false;
  const auto g1 = grammar_of(one);
  EXPECT_TRUE(accepts(*g1, R"([{"name": "get_time", "parameters": {}}])"));
  EXPECT_FALSE(accepts(*g1, R"([{"name": "get_time", "parameters": {}}, {"name": "get_time", "parameters": {}}])"))
      << "parallel_tool_calls false: one call";
}

TEST(OutputControls, AModelWithoutThinkMarkersHasNoThinkingControl) {
  EXPECT_FALSE(thinking_control(ChatFormat{}, testing::test_tokenizer(), "prompt", 10).has_value());
  EXPECT_EQ(marker_token(testing::test_tokenizer(), ""), std::nullopt);
}

TEST(OutputControls, AStrictToolGrammarNeedsAStrictToolTheHermesFormatAndItsCallToken) {
  AgentFields a = with_tools(ToolChoice::kAuto);
  const ChatFormat hermes{ChatFamily::kHermes, "", ""};
  auto none = strict_tool_grammar(a, hermes, testing::test_tokenizer());
  ASSERT_TRUE(std::holds_alternative<std::optional<EngineRequest::TriggeredGrammar>>(none));
  EXPECT_FALSE(std::get<std::optional<EngineRequest::TriggeredGrammar>>(none).has_value()) << "no tool is strict";
  a.tools[0]["function"]["strict"] = true;
  auto no_token = strict_tool_grammar(a, hermes, testing::test_tokenizer());
  EXPECT_FALSE(std::get<std::optional<EngineRequest::TriggeredGrammar>>(no_token).has_value())
      << "this vocab has no <tool_call> token";
  a.tool_choice = ToolChoice::kNone;
  EXPECT_FALSE(std::get<std::optional<EngineRequest::TriggeredGrammar>>(strict_tool_grammar(
                   a, hermes, testing::test_tokenizer())).has_value());
}

}  // namespace
}  // namespace met
