// ForcedCalls: the tool calls of a forced tool_choice's output, which the
// grammar makes JSON (output_controls.h): a named function's arguments
// object, or for "required" an array of {"name", "parameters"} calls. The
// JSON text comes in pieces (the content left once ChatShaper has split off
// any reasoning) and becomes ToolCallBegin and argument-piece events as it
// arrives, the way OpenAI streams calls: a call begins once its name is
// known and its arguments have begun, its arguments stream as far as they
// are certain (json_object_prefix), and every call of an array streams
// before the next begins.
// A call cut off (max_tokens) is never content: streamed, what was sent is
// closed into a JSON object and kept; whole (stream_tool_calls false), only
// complete calls are kept.
// Invariants: a call's argument pieces concatenate to its arguments in the
// message; begins come in index order, each before its arguments.
// Threading: one owner (a choice's ChatShaper). Tested by
// tests/server/chat_shaper_test.cc.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chat/output/parsed_message.h"
#include "chat/output/tool_call_ids.h"

namespace met {

class ForcedCalls {
 public:
  // `name`: the named function; nullopt: "required" (an array of calls).
  ForcedCalls(std::optional<std::string> name, bool stream, ToolCallIds& ids);

  void feed(std::string_view json_text, std::vector<ParseEvent>& events);
  // Adds the calls to `m`; `events` gets what was held back.
  void finish(ParsedMessage& m, std::vector<ParseEvent>& events);

 private:
  // The array's scanner: where an element's name and arguments lie. kKey:
  // before or in a key; kValue: before or in the key's value.
  enum class At { kArrayStart, kElementStart, kKey, kColon, kValue, kAfterValue, kDone };
  struct Element {
    std::optional<std::string> name;
    size_t args_begin = std::string::npos;  // in text_
    size_t args_end = std::string::npos;    // once the arguments value closed
  };

  void scan(std::vector<ParseEvent>& events);
  void scan_byte(std::vector<ParseEvent>& events);
  void scan_string_byte(char c);
  void scan_value_byte(char c, std::vector<ParseEvent>& events);
  // A value of the element (depth 1) closed at text_[value_begin_, end).
  void value_closed(size_t end);
  void element_closed(std::vector<ParseEvent>& events);
  // Streams the open call's arguments as far as they are certain.
  void stream_args(size_t args_begin, size_t args_end, std::vector<ParseEvent>& events);
  void begin_call(const std::string& name, std::vector<ParseEvent>& events);
  // Ends the open call: the rest of its arguments, or (cut off) its closing.
  void end_call(std::optional<std::string_view> whole_args, std::vector<ParseEvent>& events);

  std::optional<std::string> named_;
  bool stream_;
  ToolCallIds& ids_;
  std::string text_;
  std::vector<ToolCall> calls_;  // complete ones
  // The open (begun, not ended) call.
  std::optional<ToolCall> open_;
  std::string closing_ = "{}";  // closes open_->arguments into an object
  // The scanner ("required").
  size_t pos_ = 0;
  At at_ = At::kArrayStart;
  int depth_ = 0;  // brackets open inside the element (1: the element's own)
  bool in_string_ = false;
  bool escaped_ = false;
  std::string key_;
  bool value_open_ = false;  // kValue: its first byte came
  size_t value_begin_ = 0;
  Element element_;
};

}  // namespace met
