// XML-like tool-call bodies: see tool_body_xml.h. Each syntax is an
// XmlCallSyntax read by xml_call_scanner.
// Tested by tests/chat/tool_body_xml_test.cc.
#include "chat/output/tool_body_xml.h"

#include <string>
#include <utility>

#include "chat/output/xml_call_scanner.h"

namespace met {
namespace {

const XmlCallSyntax& function_tags() {
  static const XmlCallSyntax syntax = [] {
    XmlCallSyntax s;
    s.name_open = "<function=";
    s.name_close = ">";
    s.key_open = "<parameter=";
    s.key_close = ">";
    s.value_close = "</parameter>";
    s.value_stops = {"<parameter=", "</function>"};
    s.call_close = "</function>";
    s.strip_value_newlines = true;
    return s;
  }();
  return syntax;
}

const XmlCallSyntax& arg_key_values() {
  static const XmlCallSyntax syntax = [] {
    XmlCallSyntax s;
    s.name_close = "<arg_key>";
    s.name_close_opens_key = true;
    s.key_open = "<arg_key>";
    s.key_close = "</arg_key>";
    s.value_open = "<arg_value>";
    s.value_close = "</arg_value>";
    s.value_stops = {"<arg_key>"};
    return s;
  }();
  return syntax;
}

XmlCallSyntax invoke(std::string_view prefix) {
  XmlCallSyntax s;
  s.name_close = "\">";
  s.key_open = "<" + std::string(prefix) + "parameter name=\"";
  s.key_close = ">";
  s.value_close = "</" + std::string(prefix) + "parameter>";
  s.value_stops = {s.key_open};
  s.key_has_attributes = true;
  return s;
}

ParsedCall to_call(XmlScan&& scan) { return ParsedCall{std::move(scan.name), std::move(scan.argument_pieces)}; }

std::optional<CallPreview> to_preview(std::optional<XmlScan> scan) {
  if (!scan) return std::nullopt;
  CallPreview preview{std::move(scan->name), "", std::move(scan->closing)};
  for (const std::string& piece : scan->argument_pieces) preview.arguments_prefix += piece;
  return preview;
}

Result<std::vector<ParsedCall>> parse_single(std::string_view body, const XmlCallSyntax& syntax) {
  Result<XmlScan> scan = scan_complete_call(body, 0, syntax);
  if (!scan.ok()) return scan.status();
  return std::vector<ParsedCall>{to_call(std::move(*scan))};
}

}  // namespace

Result<std::vector<ParsedCall>> parse_function_tags(std::string_view body) {
  std::vector<ParsedCall> calls;
  size_t pos = 0;
  while (body.find("<function=", pos) != std::string_view::npos) {
    Result<XmlScan> scan = scan_complete_call(body, pos, function_tags());
    if (!scan.ok()) return scan.status();
    pos = scan->end;
    calls.push_back(to_call(std::move(*scan)));
  }
  if (calls.empty()) return invalid_argument("tool call: no <function=");
  return calls;
}

std::optional<CallPreview> preview_function_tags(std::string_view body) {
  return to_preview(scan_partial_call(body, function_tags()));
}

Result<std::vector<ParsedCall>> parse_arg_key_values(std::string_view body) {
  return parse_single(body, arg_key_values());
}

std::optional<CallPreview> preview_arg_key_values(std::string_view body) {
  return to_preview(scan_partial_call(body, arg_key_values()));
}

Result<std::vector<ParsedCall>> parse_invoke(std::string_view body, std::string_view prefix) {
  return parse_single(body, invoke(prefix));
}

std::optional<CallPreview> preview_invoke(std::string_view body, std::string_view prefix) {
  return to_preview(scan_partial_call(body, invoke(prefix)));
}

}  // namespace met
