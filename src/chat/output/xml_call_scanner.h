// XmlCallScanner: reads one XML-like tool call (a name, then key/value
// parameters) from a body that is either complete or still arriving, for the
// Qwen3-Coder/Seed-OSS, GLM and invoke (DeepSeek V3.2 DSML, MiniMax) syntaxes.
// One scanner serves both cases so a preview is, by construction, a prefix of
// the final arguments: closed parameters, and a value still arriving once it
// is surely a string (its first byte can start no other JSON value, or the
// markup says string="true"), streamed as escaped JSON string text.
// Value types: a value that parses as JSON other than a string keeps that
// type; anything else is a JSON string (see tool_body_xml.h).
// Invariants: for bodies b and b+x, preview(b).arguments is a prefix of
// preview(b+x).arguments and of the complete scan's arguments when b+x is
// well formed. Threading: immutable, any thread.
// Tested by tests/chat/tool_body_xml_test.cc.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chat/output/tool_syntax.h"
#include "core/status.h"

namespace met {

struct XmlCallSyntax {
  std::string name_open;   // what precedes the name ("<function="); empty: the body starts with it
  std::string name_close;  // what follows it (">", "\">", or GLM's "<arg_key>")
  bool name_close_opens_key = false;  // GLM: the name ends where the first key begins
  std::string key_open;    // "<parameter=", "<arg_key>", "<｜DSML｜parameter name=\""
  std::string key_close;   // ">", "</arg_key>"
  std::string value_open;  // GLM's "<arg_value>"; empty: the value follows the key
  std::string value_close; // "</parameter>", "</arg_value>"
  std::vector<std::string> value_stops;  // markers that also end an unclosed value
  std::string call_close;  // "</function>": the call ends (more may follow); empty: the body's end
  bool strip_value_newlines = false;  // drop one leading and one trailing newline of each value
  bool key_has_attributes = false;    // invoke: `K" string="true"`
};

struct XmlScan {
  std::string name;
  std::vector<std::string> argument_pieces;  // complete: the object, one piece per parameter
  std::string closing;  // partial: what makes the pieces a JSON object
  size_t end = 0;       // complete: where the call's text ends in the body
};

// The call starting at `pos` in a complete body; errors for malformed markup.
Result<XmlScan> scan_complete_call(std::string_view body, size_t pos, const XmlCallSyntax& syntax);
// The stable part of a call whose body is still arriving; nullopt until its
// name is known.
std::optional<XmlScan> scan_partial_call(std::string_view body, const XmlCallSyntax& syntax);

}  // namespace met
