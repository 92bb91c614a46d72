// Tool-call bodies written as JSON: the helpers that turn a call object
// ({"name": …, "arguments": {…}} and its family variants), an array of them,
// or a bare arguments object into ParsedCalls with compact JSON arguments.
// Invariants: pure functions; malformed input is an error value, never an
// exception or a crash. Threading: any.
// Tested by tests/chat/tool_body_json_test.cc.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "chat/output/tool_syntax.h"
#include "core/status.h"

namespace met {

// The names a family uses inside a call object: "name"/"tool_name" and
// "arguments"/"parameters" (the first key present is used).
struct CallKeys {
  std::vector<std::string> name_keys = {"name"};
  std::vector<std::string> argument_keys = {"arguments", "parameters"};
  // An object without an arguments key is no call (Llama's bare JSON, where
  // {"name": "Bob"} may well be an answer).
  bool require_arguments = false;
};

// `value` as JSON text on one line, invalid UTF-8 replaced (never throws).
std::string dump_compact(const nlohmann::ordered_json& value);

// Compact JSON of an arguments value: an object as is, a string holding an
// object parsed first, absent as "{}"; anything else is an error.
Result<std::string> arguments_json(const nlohmann::ordered_json* value);

// One call from `text` (a JSON object); surrounding whitespace is allowed.
Result<std::vector<ParsedCall>> parse_call_object(std::string_view text, const CallKeys& keys);
// Calls from `text`: a JSON array of call objects, or one call object.
Result<std::vector<ParsedCall>> parse_call_list(std::string_view text, const CallKeys& keys);
// One call named `name` whose arguments are the JSON object in `text`, kept
// as written (trimmed), so that a streamed prefix of it stays a prefix.
Result<std::vector<ParsedCall>> parse_named_arguments(std::string_view name, std::string_view text);

// The preview of a call named `name` whose arguments, still arriving, are
// `text` (json_object_prefix); nullopt while the name is empty.
std::optional<CallPreview> preview_named_arguments(std::string_view name, std::string_view text);

// `text` without a surrounding Markdown code fence (```json … ```), trimmed.
std::string_view strip_code_fence(std::string_view text);
// `text` without leading and trailing whitespace.
std::string_view trim_space(std::string_view text);

}  // namespace met
