// ToolSyntax: how one chat family marks tool calls in generated text, as data
// for MarkedOutputParser: the markers that open and close a call, the function
// that turns a call's body into calls, and the markers that are dropped from
// content (section wrappers such as <|tool_calls_section_begin|>).
// Invariants: a CallSyntax with an empty `end` has a `find_end`; every begin
// marker is non-empty. Threading: immutable after construction, any thread.
// Tested by tests/chat/json_families_test.cc and xml_families_test.cc.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chat/output/chat_format.h"
#include "core/status.h"

namespace met {

// One call found in a body: its name and its arguments as JSON text in pieces
// (the concatenation is the arguments object).
struct ParsedCall {
  std::string name;
  std::vector<std::string> argument_pieces;
};

// What is already certain about a call whose body is still arriving: its
// name and a prefix of its arguments (with the text that would close them
// into a JSON object, used if the call turns out malformed).
struct CallPreview {
  std::string name;
  std::string arguments_prefix;
  std::string closing;
};

// Turns the text between a call's begin and end markers into calls; an error
// means the markup is malformed (the parser then keeps the text as content).
using BodyParser = std::function<Result<std::vector<ParsedCall>>(std::string_view body)>;
// For calls without an end marker: the length of the body once it is
// complete, or nullopt while more text is needed. `at_end` is true when no
// more text will come.
using BodyEnd = std::function<std::optional<size_t>(std::string_view body, bool at_end)>;
// The preview of a body still arriving, or nullopt until the name is known.
// Its arguments_prefix only grows as the body grows, and is a prefix of the
// first parsed call's arguments once the body is complete and well formed.
using BodyPreview = std::function<std::optional<CallPreview>(std::string_view body)>;

struct CallSyntax {
  std::string begin;
  std::string end;  // empty: the body delimits itself through find_end
  BodyParser parse;
  BodyEnd find_end;
  BodyPreview preview;  // optional: stream the call before it closes
};

struct ToolSyntax {
  std::vector<CallSyntax> calls;
  std::vector<std::string> dropped;  // markers removed from content without effect
  // Index into `calls` of the syntax used when the message (or the text after
  // a call) starts with '{' and no marker (Llama 3.x bare JSON calls).
  std::optional<size_t> bare_json_call;
  // Text the prompt already ended with and the output continues from
  // (Functionary v3.2's ">>>").
  std::string implicit_prefix;
};

ToolSyntax tool_syntax_for(ChatFamily family);

}  // namespace met
