// The request fields for tools, reasoning and structured output, read and
// checked for form (a 400 names the field): structured output (`response_format` json_object / json_schema,
// llama.cpp's `grammar` GBNF and `json_schema`), tools (`tools`,
// `tool_choice`: "none", "auto", "required" or a named function;
// `parallel_tool_calls`: false allows one call a turn) and the
// reasoning knobs passed to the chat template (`chat_template_kwargs`,
// `reasoning_effort`) plus met's `thinking_budget`,
// `spontaneous_thinking_budget` and `think_watchdog`. Compiling a grammar and
// rendering tools happen in PromptBuilder, which knows the model.
// Invariants: at most one structured-output form; a named tool_choice names
// a tool in `tools`.
// Threading: pure functions. Tested by tests/server/agent_fields_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "server/json_fields.h"

namespace met {

enum class OutputConstraint : uint8_t { kNone, kJsonObject, kJsonSchema, kGbnf };
enum class ToolChoice : uint8_t { kNone, kAuto, kRequired, kNamed };

struct AgentFields {
  OutputConstraint constraint = OutputConstraint::kNone;
  json_fields::Json schema;   // kJsonSchema
  bool strict = false;        // kJsonSchema: additionalProperties defaults to false
  std::string gbnf;           // kGbnf
  json_fields::Json tools = json_fields::Json::array();  // [{type: function, function: {...}}]
  ToolChoice tool_choice = ToolChoice::kAuto;             // "auto" when tools are given, else "none"
  std::string tool_choice_name;                           // kNamed
  bool parallel_tool_calls = true;                        // false: at most one call per turn
  json_fields::Json chat_template_kwargs = json_fields::Json::object();
  std::optional<std::string> reasoning_effort;
  std::optional<int32_t> thinking_budget;
  std::optional<int32_t> spontaneous_thinking_budget;  // thinking the model opens itself
  bool think_watchdog = true;                          // close thinking that loops
};

json_fields::MaybeError read_agent_fields(const json_fields::Json& obj, bool chat, AgentFields& out);

}  // namespace met
