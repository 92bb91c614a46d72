// MarkedOutputParser: the OutputParser for every family whose markup is a
// set of marker strings (all but GPT-OSS harmony): think-start/think-end
// around reasoning, and the ToolSyntax's call markers around tool calls.
// Modes: content (looking for think-start, dropped markers and call begins),
// reasoning (looking for think-end), call (collecting a body until its end
// marker or until find_end says it is complete). A closed call's body is
// parsed; if parsing fails the begin marker, body and end marker go to
// content verbatim. An unterminated call at finish is parsed the same way.
// Syntaxes with a preview (the XML-like ones, and JSON arguments after a
// name: DeepSeek, Kimi, Mistral [ARGS], Functionary) stream a call while it
// arrives, unless ParserOptions::stream_tool_calls is off: ToolCallBegin once
// the name is known, then argument text as it becomes certain; if such a call
// then proves malformed, its arguments are closed as they stand (still a
// JSON object) and its markup also goes to content, so no text is lost.
// A missing think-end leaves everything after think-start as reasoning. When
// the prompt opened thinking, a think-start the model repeats is dropped.
// Invariants: see OutputParser; `pending_` holds only text that may still
// start a marker, `body_` only the current call's body.
// Threading: one owner. Tested by tests/chat/output_parser_test.cc and the
// family tests.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "chat/output/call_stream.h"
#include "chat/output/chat_format.h"
#include "chat/output/message_builder.h"
#include "chat/output/output_parser.h"
#include "chat/output/tool_syntax.h"

namespace met {

class MarkedOutputParser final : public OutputParser {
 public:
  MarkedOutputParser(const ChatFormat& format, ToolSyntax syntax, const ParserOptions& options);

  void feed(std::string_view delta, std::vector<ParseEvent>& events) override;
  ParsedMessage finish(std::vector<ParseEvent>& events) override;

 private:
  enum class Mode { kContent, kReasoning, kCall };

  // Decides as much of pending_ as possible.
  void drain(bool at_end, std::vector<ParseEvent>& events);
  // Each step decides one thing; false means it needs more text.
  bool step_content(bool at_end, std::vector<ParseEvent>& events);
  bool step_reasoning(bool at_end, std::vector<ParseEvent>& events);
  bool step_call(bool at_end, std::vector<ParseEvent>& events);
  bool step_bare_json(bool at_end, std::vector<ParseEvent>& events);
  // The prompt opened thinking and the model may open it again: drops that
  // second think-start.
  bool skip_repeated_think_start(bool at_end);
  void open_call(size_t syntax, std::string begin_marker);
  void close_call(bool terminated, std::vector<ParseEvent>& events);
  // Streams what the call syntax's preview makes certain of the open call.
  void stream_preview(std::vector<ParseEvent>& events);
  // Whether a call may name `name` (ParserOptions::tool_names).
  bool names_a_tool(std::string_view name) const;
  // Emits pending_[0, n) as content and erases it.
  void flush_content(size_t n, std::vector<ParseEvent>& events);

  std::string think_start_;
  std::string think_end_;
  ToolSyntax syntax_;
  // Markers looked for in content: [0] think-start, then dropped ones, then
  // one begin per call syntax (empty strings never match).
  std::vector<std::string> content_markers_;
  size_t first_call_marker_ = 0;
  MessageBuilder builder_;
  Mode mode_ = Mode::kContent;
  std::string pending_;
  std::string body_;
  std::string call_begin_;  // the marker that opened the current call, for the content fallback
  size_t call_syntax_ = 0;
  bool awaiting_bare_json_ = false;  // only whitespace since the start or the last call
  bool repeated_think_start_possible_ = false;
  CallStream stream_;  // the open call, once its preview began it
  std::vector<std::string> tool_names_;  // ParserOptions::tool_names
};

}  // namespace met
