// JSON tool-call bodies: see tool_body_json.h. nlohmann is used without
// exceptions (parse with allow_exceptions=false, dump with replacement of
// invalid UTF-8).
// Tested by tests/chat/tool_body_json_test.cc.
#include "chat/output/tool_body_json.h"

#include "chat/output/json_prefix.h"

namespace met {
namespace {

using Json = nlohmann::ordered_json;

const Json* first_key(const Json& object, const std::vector<std::string>& keys) {
  for (const std::string& key : keys) {
    auto it = object.find(key);
    if (it != object.end()) return &*it;
  }
  return nullptr;
}

Result<ParsedCall> call_from_object(const Json& object, const CallKeys& keys) {
  if (!object.is_object()) return invalid_argument("tool call: not a JSON object");
  const Json* name = first_key(object, keys.name_keys);
  if (name == nullptr || !name->is_string() || name->get<std::string>().empty()) {
    return invalid_argument("tool call: no function name");
  }
  const Json* argument_value = first_key(object, keys.argument_keys);
  if (argument_value == nullptr && keys.require_arguments) return invalid_argument("tool call: no arguments");
  Result<std::string> arguments = arguments_json(argument_value);
  if (!arguments.ok()) return arguments.status();
  return ParsedCall{name->get<std::string>(), {std::move(*arguments)}};
}

Result<Json> parse_json(std::string_view text) {
  Json value = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return invalid_argument("tool call: invalid JSON");
  return value;
}

}  // namespace

std::string_view trim_space(std::string_view text) {
  const auto is_space = [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

std::string_view strip_code_fence(std::string_view text) {
  text = trim_space(text);
  if (text.starts_with("```")) {
    text.remove_prefix(3);
    if (text.starts_with("json")) text.remove_prefix(4);
    if (text.ends_with("```")) text.remove_suffix(3);
  }
  return trim_space(text);
}

std::string dump_compact(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Result<std::string> arguments_json(const Json* value) {
  if (value == nullptr || value->is_null()) return std::string("{}");
  if (value->is_object()) return dump_compact(*value);
  if (value->is_string()) {
    Result<Json> inner = parse_json(value->get<std::string>());
    if (inner.ok() && inner->is_object()) return dump_compact(*inner);
  }
  return invalid_argument("tool call: arguments are not a JSON object");
}

Result<std::vector<ParsedCall>> parse_call_object(std::string_view text, const CallKeys& keys) {
  Result<Json> value = parse_json(text);
  if (!value.ok()) return value.status();
  Result<ParsedCall> call = call_from_object(*value, keys);
  if (!call.ok()) return call.status();
  return std::vector<ParsedCall>{std::move(*call)};
}

Result<std::vector<ParsedCall>> parse_call_list(std::string_view text, const CallKeys& keys) {
  Result<Json> value = parse_json(text);
  if (!value.ok()) return value.status();
  if (!value->is_array()) return parse_call_object(text, keys);
  if (value->empty()) return invalid_argument("tool call: empty list");
  std::vector<ParsedCall> calls;
  for (const Json& element : *value) {
    Result<ParsedCall> call = call_from_object(element, keys);
    if (!call.ok()) return call.status();
    calls.push_back(std::move(*call));
  }
  return calls;
}

Result<std::vector<ParsedCall>> parse_named_arguments(std::string_view name, std::string_view text) {
  name = trim_space(name);
  if (name.empty()) return invalid_argument("tool call: no function name");
  if (trim_space(text).empty()) return std::vector<ParsedCall>{ParsedCall{std::string(name), {"{}"}}};
  Result<Json> value = parse_json(text);
  if (!value.ok()) return value.status();
  // An object keeps the model's own text, so what was streamed of it is a prefix.
  if (value->is_object()) return std::vector<ParsedCall>{ParsedCall{std::string(name), {std::string(trim_space(text))}}};
  Result<std::string> arguments = arguments_json(&*value);
  if (!arguments.ok()) return arguments.status();
  return std::vector<ParsedCall>{ParsedCall{std::string(name), {std::move(*arguments)}}};
}

std::optional<CallPreview> preview_named_arguments(std::string_view name, std::string_view text) {
  name = trim_space(name);
  if (name.empty()) return std::nullopt;
  CallPreview preview{std::string(name), "", "{}"};
  text = trim_space(text);
  if (std::optional<JsonPrefix> prefix = json_object_prefix(text)) {
    preview.arguments_prefix = std::string(text.substr(0, prefix->safe_end));
    preview.closing = std::move(prefix->closing);
  }
  return preview;
}

}  // namespace met
