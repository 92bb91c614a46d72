// ParsedMessage and ParseEvent: what an OutputParser makes of a model's
// generated text. Events are the streaming view (OpenAI's delta.reasoning_content,
// delta.content, delta.tool_calls[i]); ParsedMessage is the whole turn.
// Invariants: concatenating a stream's ReasoningDelta texts gives
// ParsedMessage::reasoning_content, its ContentDelta texts give content, and the
// ToolCallArgumentsDelta texts of index i give tool_calls[i].arguments; a
// ToolCallBegin for index i comes before any argument delta of i, and indexes
// count 0, 1, 2, … in order. Threading: plain values, any thread.
// Tested by tests/chat/output_parser_test.cc.
#pragma once

#include <cstddef>
#include <string>
#include <variant>
#include <vector>

namespace met {

struct ReasoningDelta {
  std::string text;
  bool operator==(const ReasoningDelta&) const = default;
};
struct ContentDelta {
  std::string text;
  bool operator==(const ContentDelta&) const = default;
};
struct ToolCallBegin {
  size_t index = 0;
  std::string id;    // "call_…"
  std::string name;  // the function's name
  bool operator==(const ToolCallBegin&) const = default;
};
struct ToolCallArgumentsDelta {
  size_t index = 0;
  std::string text;  // a piece of the call's arguments, a JSON object text
  bool operator==(const ToolCallArgumentsDelta&) const = default;
};

using ParseEvent = std::variant<ReasoningDelta, ContentDelta, ToolCallBegin, ToolCallArgumentsDelta>;

struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments;  // a JSON object text
  bool operator==(const ToolCall&) const = default;
};

struct ParsedMessage {
  std::string reasoning_content;
  std::string content;
  std::vector<ToolCall> tool_calls;
  // True when the turn's last non-whitespace output was a tool call: the
  // finish_reason is then "tool_calls".
  bool ended_with_tool_call = false;
  bool operator==(const ParsedMessage&) const = default;
};

}  // namespace met
