// Structured-output, tool and reasoning fields. Tested by
// tests/server/agent_fields_test.cc.
#include "server/agent_fields.h"

#include <fmt/format.h>

#include <limits>

namespace met {
namespace {

using namespace json_fields;

constexpr size_t kMaxTools = 128;

MaybeError read_response_format(const Json& obj, AgentFields& out) {
  const Json* rf = field(obj, "response_format");
  if (rf == nullptr) return std::nullopt;
  if (!rf->is_object()) return wrong_type("response_format", "an object", *rf);
  std::string type;
  MaybeError e = read_string(*rf, "type", type);
  if (e || type.empty()) return invalid_request("response_format.type", "'response_format.type' must be a string");
  if (type == "text") return std::nullopt;
  if (type == "json_object") {
    out.constraint = OutputConstraint::kJsonObject;
    return std::nullopt;
  }
  if (type != "json_schema") {
    return invalid_request("response_format.type", fmt::format("'response_format.type' must be \"text\", "
                                                               "\"json_object\" or \"json_schema\", got \"{}\"",
                                                               type));
  }
  const Json* js = field(*rf, "json_schema");
  const Json* schema = js != nullptr && js->is_object() ? field(*js, "schema") : nullptr;
  if (schema == nullptr || !(schema->is_object() || schema->is_boolean())) {
    return invalid_request("response_format.json_schema.schema",
                           "'response_format.json_schema.schema' must be a JSON Schema object");
  }
  out.constraint = OutputConstraint::kJsonSchema;
  out.schema = *schema;
  if (MaybeError se = read_bool(*js, "strict", out.strict)) {
    se->param = "response_format.json_schema.strict";
    return se;
  }
  return std::nullopt;
}

// llama.cpp's `grammar` (GBNF) and `json_schema`, one form per request.
MaybeError read_llama_constraints(const Json& obj, AgentFields& out) {
  const Json* gbnf = field(obj, "grammar");
  const Json* schema = field(obj, "json_schema");
  const bool taken = out.constraint != OutputConstraint::kNone;
  if ((gbnf != nullptr || schema != nullptr) && (taken || (gbnf != nullptr && schema != nullptr))) {
    return invalid_request(gbnf != nullptr ? "grammar" : "json_schema",
                           "give one of 'response_format', 'grammar' and 'json_schema'");
  }
  if (gbnf != nullptr) {
    MET_API_RETURN_IF_ERROR(read_string(obj, "grammar", out.gbnf));
    out.constraint = OutputConstraint::kGbnf;
  }
  if (schema != nullptr) {
    if (!schema->is_object()) return wrong_type("json_schema", "a JSON Schema object", *schema);
    out.schema = *schema;
    out.constraint = OutputConstraint::kJsonSchema;
  }
  return std::nullopt;
}

MaybeError read_tool(const Json& tool, size_t i) {
  const std::string at = fmt::format("tools[{}]", i);
  const Json* type = tool.is_object() ? field(tool, "type") : nullptr;
  if (type == nullptr || *type != "function") {
    return invalid_request(at + ".type", fmt::format("'{}.type' must be \"function\"", at));
  }
  const Json* fn = field(tool, "function");
  const Json* name = fn != nullptr && fn->is_object() ? field(*fn, "name") : nullptr;
  if (name == nullptr || !name->is_string() || name->get<std::string>().empty()) {
    return invalid_request(at + ".function.name", fmt::format("'{}.function.name' must be a non-empty string", at));
  }
  if (const Json* params = field(*fn, "parameters"); params != nullptr && !params->is_object()) {
    return invalid_request(at + ".function.parameters",
                           fmt::format("'{}.function.parameters' must be a JSON Schema object", at));
  }
  return std::nullopt;
}

bool has_tool(const Json& tools, const std::string& name) {
  for (const Json& t : tools) {
    if (t["function"]["name"] == name) return true;
  }
  return false;
}

MaybeError read_tool_choice(const Json& obj, AgentFields& out) {
  out.tool_choice = out.tools.empty() ? ToolChoice::kNone : ToolChoice::kAuto;
  MET_API_RETURN_IF_ERROR(read_bool(obj, "parallel_tool_calls", out.parallel_tool_calls));
  const Json* tc = field(obj, "tool_choice");
  if (tc == nullptr) return std::nullopt;
  if (tc->is_string()) {
    const std::string s = tc->get<std::string>();
    if (s == "none") out.tool_choice = ToolChoice::kNone;
    if (s == "auto") out.tool_choice = ToolChoice::kAuto;
    if (s == "required") out.tool_choice = ToolChoice::kRequired;
    if (s != "none" && s != "auto" && s != "required") {
      return invalid_request("tool_choice", fmt::format("'tool_choice' must be \"none\", \"auto\", \"required\" or "
                                                        "{{\"type\": \"function\", ...}}, got \"{}\"",
                                                        s));
    }
  } else {
    const Json* fn = tc->is_object() ? field(*tc, "function") : nullptr;
    const Json* name = fn != nullptr && fn->is_object() ? field(*fn, "name") : nullptr;
    if (name == nullptr || !name->is_string()) {
      return invalid_request("tool_choice", "'tool_choice' names a function as {\"type\": \"function\", "
                                            "\"function\": {\"name\": ...}}");
    }
    out.tool_choice = ToolChoice::kNamed;
    out.tool_choice_name = name->get<std::string>();
  }
  if (out.tool_choice != ToolChoice::kNone && out.tools.empty()) {
    return invalid_request("tool_choice", "'tool_choice' asks for a tool call but 'tools' is empty");
  }
  if (out.tool_choice == ToolChoice::kNamed && !has_tool(out.tools, out.tool_choice_name)) {
    return invalid_request("tool_choice", fmt::format("'tool_choice' names '{}', which is not in 'tools'",
                                                      out.tool_choice_name));
  }
  return std::nullopt;
}

MaybeError read_tools(const Json& obj, AgentFields& out) {
  if (const Json* tools = field(obj, "tools")) {
    if (!tools->is_array()) return wrong_type("tools", "an array", *tools);
    if (tools->size() > kMaxTools) {
      return invalid_request("tools", fmt::format("'tools' holds {} tools; at most {}", tools->size(), kMaxTools));
    }
    for (size_t i = 0; i < tools->size(); ++i) MET_API_RETURN_IF_ERROR(read_tool((*tools)[i], i));
    out.tools = *tools;
  }
  return read_tool_choice(obj, out);
}

MaybeError read_reasoning(const Json& obj, AgentFields& out) {
  if (const Json* kw = field(obj, "chat_template_kwargs")) {
    if (!kw->is_object()) return wrong_type("chat_template_kwargs", "an object", *kw);
    out.chat_template_kwargs = *kw;
  }
  if (const Json* effort = field(obj, "reasoning_effort")) {
    if (!effort->is_string()) return wrong_type("reasoning_effort", "a string", *effort);
    const std::string e = effort->get<std::string>();
    if (e != "minimal" && e != "low" && e != "medium" && e != "high") {
      return invalid_request("reasoning_effort", fmt::format("'reasoning_effort' must be \"minimal\", \"low\", "
                                                             "\"medium\" or \"high\", got \"{}\"",
                                                             e));
    }
    out.reasoning_effort = e;
  }
  std::optional<int64_t> budget;
  MET_API_RETURN_IF_ERROR(read_int(obj, "thinking_budget", 0, std::numeric_limits<int32_t>::max(), budget));
  if (budget) out.thinking_budget = static_cast<int32_t>(*budget);
  std::optional<int64_t> spontaneous;
  MET_API_RETURN_IF_ERROR(
      read_int(obj, "spontaneous_thinking_budget", 0, std::numeric_limits<int32_t>::max(), spontaneous));
  if (spontaneous) out.spontaneous_thinking_budget = static_cast<int32_t>(*spontaneous);
  return read_bool(obj, "think_watchdog", out.think_watchdog);
}

}  // namespace

MaybeError read_agent_fields(const Json& obj, bool chat, AgentFields& out) {
  MET_API_RETURN_IF_ERROR(read_response_format(obj, out));
  MET_API_RETURN_IF_ERROR(read_llama_constraints(obj, out));
  if (!chat) {
    if (const Json* tools = field(obj, "tools"); tools != nullptr && !(tools->is_array() && tools->empty())) {
      return invalid_request("tools", "'tools' needs /v1/chat/completions");
    }
    return std::nullopt;
  }
  MET_API_RETURN_IF_ERROR(read_tools(obj, out));
  return read_reasoning(obj, out);
}

}  // namespace met
