// OutputParser: turns a model's generated text, fed as UTF-8 deltas in any
// split, into reasoning, content and tool calls (ParseEvent stream and, at
// finish, the ParsedMessage). make_output_parser picks the family's parser.
// Invariants: for a given text, the final message and the per-kind
// concatenation of events do not depend on how the text was split; markup
// never reaches content (tool-call markup the model writes inside thinking
// stays reasoning text), except malformed tool-call markup, which is kept as
// content (never lost) when its call closes or at finish; text is held back
// only while a marker may still be starting. Tool-call arguments are always
// a JSON object text.
// Threading: a parser belongs to one request's owner thread.
// Tested by tests/chat/output_parser_test.cc, the family tests
// (tests/chat/*_famil*_test.cc) and tests/chat/split_invariance_test.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "chat/output/chat_format.h"
#include "chat/output/parsed_message.h"

namespace met {

struct ParserOptions {
  // The prompt ended inside thinking (see generation_starts_in_thinking): the
  // output is reasoning until the think-end marker.
  bool starts_in_thinking = false;
  // False when the request has no tools or tool_choice is "none": tool-call
  // markup is then plain content.
  bool parse_tool_calls = true;
  // Stream a call (ToolCallBegin, then argument text) while it arrives, for
  // the families that can (all but Hermes-style JSON-with-name bodies, lists
  // and harmony). A streamed call that then proves malformed or is cut off
  // keeps what was streamed, closed into a JSON object, and its markup also
  // goes to content (so finish_reason is not "tool_calls"). False: calls
  // appear only once complete and valid, and malformed ones are content only;
  // non-streaming responses should use false.
  bool stream_tool_calls = true;
  // Seeds the tool-call ids ("call_…"); the same seed gives the same ids.
  uint64_t id_seed = 0;
  // The request's tool names: a call is announced (streamed or not) only
  // once it names one of them; a call to another name is content. Empty:
  // any name.
  std::vector<std::string> tool_names = {};
};

class OutputParser {
 public:
  virtual ~OutputParser() = default;

  // Appends the events `delta` decides to `events`.
  virtual void feed(std::string_view delta, std::vector<ParseEvent>& events) = 0;
  // No more text: appends the events of everything held back and returns the
  // whole message. REQUIRES: called once, after the last feed.
  virtual ParsedMessage finish(std::vector<ParseEvent>& events) = 0;
};

std::unique_ptr<OutputParser> make_output_parser(const ChatFormat& format, const ParserOptions& options);

}  // namespace met
