// Tool-call bodies written as XML-like parameters (Qwen3-Coder and Seed-OSS
// <function=…><parameter=…>, GLM <arg_key>/<arg_value>, DeepSeek V3.2 DSML
// and MiniMax <invoke name=…><parameter name=…>), converted to JSON arguments,
// complete or (preview_*) while still arriving.
// A parameter value that parses as JSON other than a string (a number, true,
// an object, …) keeps that type; any other value is a JSON string. Without the
// tool's schema, "5" is therefore the number 5 (DSML's string="true" says
// otherwise and is obeyed).
// Invariants: pure functions; complete arguments come in pieces, one per
// parameter ("{\"k\":v", ",\"k2\":v2", "}"), whose concatenation is the
// compact object; a preview's arguments are a prefix of it.
// Threading: any. Tested by tests/chat/tool_body_xml_test.cc.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "chat/output/tool_syntax.h"
#include "core/status.h"

namespace met {

// "<function=NAME>\n<parameter=K>\nV\n</parameter>\n</function>", one or more.
Result<std::vector<ParsedCall>> parse_function_tags(std::string_view body);
std::optional<CallPreview> preview_function_tags(std::string_view body);
// "NAME\n<arg_key>K</arg_key>\n<arg_value>V</arg_value>…".
Result<std::vector<ParsedCall>> parse_arg_key_values(std::string_view body);
std::optional<CallPreview> preview_arg_key_values(std::string_view body);
// "NAME\">\n<{prefix}parameter name=\"K\"[ string=\"true\"]>V</{prefix}parameter>…",
// the body of an invoke call after its `<{prefix}invoke name="` begin marker.
Result<std::vector<ParsedCall>> parse_invoke(std::string_view body, std::string_view prefix);
std::optional<CallPreview> preview_invoke(std::string_view body, std::string_view prefix);

}  // namespace met
