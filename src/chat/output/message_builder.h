// MessageBuilder: the one place a parser's decisions become ParseEvents and
// the ParsedMessage, so every family keeps ParsedMessage's invariants (events
// concatenate to the message, tool-call indexes count up from 0).
// Reasoning is trimmed at both ends; content is trimmed where markup was cut
// out (and, if `trim_content_start`, at its very start).
// Invariants: no empty delta is emitted; ended_with_tool_call is true exactly
// when a call was added and no content after it.
// Threading: one owner. Tested by tests/chat/output_parser_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "chat/output/parsed_message.h"
#include "chat/output/text_channel.h"
#include "chat/output/tool_call_ids.h"
#include "chat/output/tool_syntax.h"

namespace met {

class MessageBuilder {
 public:
  MessageBuilder(bool trim_content, uint64_t id_seed);

  void add_reasoning(std::string_view text, std::vector<ParseEvent>& events);
  void add_content(std::string_view text, std::vector<ParseEvent>& events);
  void add_call(const ParsedCall& call, std::vector<ParseEvent>& events);
  // A call streamed in parts: begin_call returns its index for add_arguments.
  size_t begin_call(std::string_view name, std::vector<ParseEvent>& events);
  void add_arguments(size_t index, std::string_view text, std::vector<ParseEvent>& events);
  // Thinking opened or closed here.
  void reasoning_boundary();
  // Markup was cut out of the content here.
  void content_boundary();
  // Flushes held text into `events` and returns the message.
  ParsedMessage finish(std::vector<ParseEvent>& events);

 private:
  TextChannel reasoning_;
  TextChannel content_;
  ToolCallIds ids_;
  ParsedMessage message_;
};

}  // namespace met
