// Output controls. Tested by tests/server/output_controls_test.cc.
#include "server/output_controls.h"

#include <fmt/format.h>

#include <string>

#include "chat/output/format_detection.h"
#include "grammar/gbnf_parser.h"
#include "grammar/json_schema.h"

namespace met {
namespace {

using Json = nlohmann::ordered_json;
using GrammarOrError = std::variant<std::shared_ptr<const Grammar>, ApiError>;

GrammarOrError compiled(Result<Grammar> g, const char* param) {
  if (!g.ok()) {
    return invalid_request(param, fmt::format("the grammar does not compile: {}", g.status().message()));
  }
  return std::make_shared<const Grammar>(std::move(*g));
}

// The schema of one call {"name": NAME, "parameters": the tool's schema}.
Json call_schema(const Json& tool) {
  const Json& fn = tool["function"];
  Json s;
  s["type"] = "object";
  s["properties"] = Json{{"name", Json{{"const", fn["name"]}}},
                         {"parameters", fn.contains("parameters") ? fn["parameters"] : Json{{"type", "object"}}}};
  s["required"] = Json::array({"name", "parameters"});
  s["additionalProperties"] = false;
  return s;
}

const Json* find_tool(const Json& tools, const std::string& name) {
  for (const Json& t : tools) {
    if (t["function"]["name"] == name) return &t;
  }
  return nullptr;
}

// vLLM's forced tool calls, the same for every model family: a named
// function's output is its arguments object; "required" is a JSON array of
// at least one {"name", "parameters"} call. ForcedToolCalls turns either
// into tool_calls.
GrammarOrError tool_call_grammar(const AgentFields& agent) {
  Json schema;
  if (agent.tool_choice == ToolChoice::kNamed) {
    const Json& fn = (*find_tool(agent.tools, agent.tool_choice_name))["function"];
    schema = fn.contains("parameters") ? fn["parameters"] : Json{{"type", "object"}};
  } else {
    Json any = Json::array();
    for (const Json& tool : agent.tools) any.push_back(call_schema(tool));
    schema = Json{{"type", "array"}, {"items", any.size() == 1 ? any[0] : Json{{"anyOf", any}}}, {"minItems", 1}};
    if (!agent.parallel_tool_calls) schema["maxItems"] = 1;
  }
  return compiled(compile_json_schema(schema, JsonSchemaOptions{.strict = true}), "tools");
}

}  // namespace

GrammarOrError build_output_grammar(const AgentFields& agent) {
  if (agent.tool_choice == ToolChoice::kRequired || agent.tool_choice == ToolChoice::kNamed) {
    if (agent.constraint != OutputConstraint::kNone) {
      return invalid_request("tool_choice", "a forced tool call cannot be combined with response_format or grammar");
    }
    return tool_call_grammar(agent);
  }
  switch (agent.constraint) {
    case OutputConstraint::kNone: return std::shared_ptr<const Grammar>();
    case OutputConstraint::kJsonObject: return std::make_shared<const Grammar>(json_object_grammar());
    case OutputConstraint::kJsonSchema:
      return compiled(compile_json_schema(agent.schema, JsonSchemaOptions{.strict = agent.strict}),
                      "response_format");
    case OutputConstraint::kGbnf: return compiled(compile_gbnf(agent.gbnf), "grammar");
  }
  return std::shared_ptr<const Grammar>();
}

const char* output_grammar_field(const AgentFields& agent) {
  if (agent.tool_choice == ToolChoice::kRequired || agent.tool_choice == ToolChoice::kNamed) return "tools";
  return agent.constraint == OutputConstraint::kGbnf ? "grammar" : "response_format";
}

std::variant<std::optional<EngineRequest::TriggeredGrammar>, ApiError> strict_tool_grammar(
    const AgentFields& agent, const ChatFormat& format, const Tokenizer& tokenizer) {
  bool any_strict = false;
  for (const Json& t : agent.tools) any_strict = any_strict || t["function"].value("strict", false);
  if (!any_strict || agent.tool_choice != ToolChoice::kAuto || format.family != ChatFamily::kHermes) {
    return std::nullopt;
  }
  const std::optional<TokenId> trigger = marker_token(tokenizer, "<tool_call>");
  if (!trigger) return std::nullopt;
  Json any = Json::array();
  for (const Json& tool : agent.tools) {
    const Json& fn = tool["function"];
    Json s;
    s["type"] = "object";
    s["properties"] = Json{{"name", Json{{"const", fn["name"]}}},
                           {"arguments", fn.value("strict", false) && fn.contains("parameters") ? fn["parameters"]
                                                                                               : Json{{"type", "object"}}}};
    s["required"] = Json::array({"name", "arguments"});
    s["additionalProperties"] = false;
    any.push_back(std::move(s));
  }
  Result<std::string> call = json_schema_to_gbnf(any.size() == 1 ? any[0] : Json{{"anyOf", any}},
                                                 JsonSchemaOptions{.strict = true});
  if (!call.ok()) {
    return invalid_request("tools", fmt::format("a strict tool's parameters do not compile: {}", call.status().message()));
  }
  // The schema's root becomes rule `tool-call` under a root of the markup.
  // Whitespace inside a call is none or one space, the way models write calls.
  const std::string& text = *call;
  std::string rules = text.rfind("root ::=", 0) == 0 ? "tool-call" + text.substr(4) : text;
  if (const size_t ws = rules.find("\nws ::="); ws != std::string::npos) {
    rules.replace(ws + 1, rules.find('\n', ws + 1) - ws - 1, "ws ::= | \" \"");
  }
  Result<Grammar> g = compile_gbnf(fmt::format("root ::= \"\\n\"? tool-call \"\\n\"? \"</tool_call>\"\n{}", rules));
  if (!g.ok()) return invalid_request("tools", fmt::format("the tool-call grammar: {}", g.status().message()));
  return EngineRequest::TriggeredGrammar{*trigger, std::make_shared<const Grammar>(std::move(*g))};
}

std::optional<TokenId> marker_token(const Tokenizer& tokenizer, std::string_view marker) {
  if (marker.empty()) return std::nullopt;
  const std::vector<TokenId> ids =
      tokenizer.encode(marker, EncodeOptions{.add_special = false, .parse_special = true});
  if (ids.size() != 1) return std::nullopt;
  return ids[0];
}

std::optional<ThinkingConfig> thinking_control(const ChatFormat& format, const Tokenizer& tokenizer,
                                               std::string_view prompt_text, std::optional<int32_t> budget) {
  const std::optional<TokenId> start = marker_token(tokenizer, format.think_start);
  const std::optional<TokenId> end = marker_token(tokenizer, format.think_end);
  if (!start || !end) return std::nullopt;
  ThinkingConfig c;
  c.think_start = *start;
  c.think_end = *end;
  c.starts_inside = generation_starts_in_thinking(prompt_text, format);
  c.budget = budget;
  return c;
}

}  // namespace met
