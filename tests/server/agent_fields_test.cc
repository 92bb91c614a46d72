// Tests for read_agent_fields: structured output, tools and reasoning knobs.
#include "server/agent_fields.h"

#include <gtest/gtest.h>

#include <string>

namespace met {
namespace {

using json_fields::Json;

struct AgentRead {
  AgentFields fields;
  std::optional<ApiError> error;
};

AgentRead read_agent(const std::string& body, bool chat = true) {
  AgentRead r;
  r.error = read_agent_fields(Json::parse(body), chat, r.fields);
  return r;
}

constexpr const char* kTools = R"("tools": [{"type": "function", "function": {"name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}])";

TEST(AgentFields, ResponseFormatJsonSchemaKeepsTheSchemaAndStrict) {
  const AgentRead r = read_agent(R"({"response_format": {"type": "json_schema", "json_schema": {"name": "x", "strict": true,
      "schema": {"type": "object", "properties": {"b": {}, "a": {}}}}}})");
  ASSERT_FALSE(r.error.has_value()) << r.error->message;
  EXPECT_EQ(r.fields.constraint, OutputConstraint::kJsonSchema);
  EXPECT_TRUE(r.fields.strict);
  EXPECT_EQ(r.fields.schema["properties"].begin().key(), "b") << "schema order is kept";
}

TEST(AgentFields, ParallelToolCallsIsABooleanThatDefaultsToTrue) {
  EXPECT_TRUE(read_agent(std::string("{") + kTools + "}").fields.parallel_tool_calls);
  EXPECT_FALSE(read_agent(std::string("{") + kTools + R"(, "parallel_tool_calls": false})").fields.parallel_tool_calls);
  const AgentRead bad = read_agent(std::string("{") + kTools + R"(, "parallel_tool_calls": "no"})");
  ASSERT_TRUE(bad.error.has_value());
  EXPECT_EQ(bad.error->param, "parallel_tool_calls");
}

TEST(AgentFields, JsonObjectAndGbnfAreConstraintsToo) {
  EXPECT_EQ(read_agent(R"({"response_format": {"type": "json_object"}})").fields.constraint, OutputConstraint::kJsonObject);
  EXPECT_EQ(read_agent(R"({"response_format": {"type": "text"}})").fields.constraint, OutputConstraint::kNone);
  const AgentRead g = read_agent(R"({"grammar": "root ::= \"yes\" | \"no\""})", /*chat=*/false);
  EXPECT_EQ(g.fields.constraint, OutputConstraint::kGbnf);
  EXPECT_EQ(g.fields.gbnf, "root ::= \"yes\" | \"no\"");
  EXPECT_EQ(read_agent(R"({"json_schema": {"type": "integer"}})", false).fields.constraint, OutputConstraint::kJsonSchema);
}

TEST(AgentFields, ToolsDefaultToAutoAndToolChoiceNamesAGivenFunction) {
  EXPECT_EQ(read_agent("{}").fields.tool_choice, ToolChoice::kNone);
  EXPECT_EQ(read_agent(std::string("{") + kTools + "}").fields.tool_choice, ToolChoice::kAuto);
  const AgentRead named = read_agent(std::string("{") + kTools +
                          R"(, "tool_choice": {"type": "function", "function": {"name": "get_weather"}}})");
  ASSERT_FALSE(named.error.has_value()) << named.error->message;
  EXPECT_EQ(named.fields.tool_choice, ToolChoice::kNamed);
  EXPECT_EQ(named.fields.tool_choice_name, "get_weather");
  EXPECT_EQ(read_agent(std::string("{") + kTools + R"(, "tool_choice": "required"})").fields.tool_choice,
            ToolChoice::kRequired);
}

TEST(AgentFields, ReasoningKnobsReachTheTemplate) {
  const AgentRead r = read_agent(R"({"chat_template_kwargs": {"enable_thinking": false}, "reasoning_effort": "high",
      "thinking_budget": 64, "spontaneous_thinking_budget": 8, "think_watchdog": false})");
  ASSERT_FALSE(r.error.has_value()) << r.error->message;
  EXPECT_EQ(r.fields.chat_template_kwargs["enable_thinking"], false);
  EXPECT_EQ(r.fields.reasoning_effort, "high");
  EXPECT_EQ(r.fields.thinking_budget, 64);
  EXPECT_EQ(r.fields.spontaneous_thinking_budget, 8);
  EXPECT_FALSE(r.fields.think_watchdog);
  EXPECT_TRUE(read_agent("{}").fields.think_watchdog) << "on by default";
}

TEST(AgentFields, AWrongFormNamesTheField) {
  struct Case {
    const char* body;
    const char* param;
    bool chat = true;
  };
  const Case cases[] = {
      {R"({"response_format": "json"})", "response_format"},
      {R"({"response_format": {"type": "xml"}})", "response_format.type"},
      {R"({"response_format": {"type": "json_schema"}})", "response_format.json_schema.schema"},
      {R"({"response_format": {"type": "json_schema", "json_schema": {"schema": {}, "strict": 1}}})",
       "response_format.json_schema.strict"},
      {R"({"response_format": {"type": "json_object"}, "grammar": "root ::= \"a\""})", "grammar"},
      {R"({"grammar": 3})", "grammar"},
      {R"({"json_schema": "x"})", "json_schema"},
      {R"({"tools": {}})", "tools"},
      {R"({"tools": [{"type": "retrieval"}]})", "tools[0].type"},
      {R"({"tools": [{"type": "function", "function": {}}]})", "tools[0].function.name"},
      {R"({"tools": [{"type": "function", "function": {"name": "f", "parameters": []}}]})",
       "tools[0].function.parameters"},
      {R"({"tool_choice": "required"})", "tool_choice"},
      {R"({"tool_choice": "sometimes"})", "tool_choice"},
      {R"({"tools": [{"type": "function", "function": {"name": "f"}}],
           "tool_choice": {"type": "function", "function": {"name": "g"}}})", "tool_choice"},
      {R"({"chat_template_kwargs": [1]})", "chat_template_kwargs"},
      {R"({"reasoning_effort": "extreme"})", "reasoning_effort"},
      {R"({"thinking_budget": -1})", "thinking_budget"},
      {R"({"spontaneous_thinking_budget": "x"})", "spontaneous_thinking_budget"},
      {R"({"think_watchdog": 1})", "think_watchdog"},
      {R"({"tools": [{"type": "function", "function": {"name": "f"}}]})", "tools", false},
  };
  for (const Case& c : cases) {
    const AgentRead r = read_agent(c.body, c.chat);
    ASSERT_TRUE(r.error.has_value()) << c.body << " was accepted";
    EXPECT_EQ(r.error->status, 400) << c.body;
    EXPECT_EQ(r.error->param, c.param) << c.body << ": " << r.error->message;
  }
}

}  // namespace
}  // namespace met
