// CallStream: one tool call streamed while its body arrives. Each preview
// (a name and a growing arguments prefix) becomes ToolCallBegin and argument
// deltas; at the close, the parsed calls either continue what was streamed
// (the rest of the arguments, then any further calls) or, when the body
// proved malformed or was cut off, the streamed arguments are closed into a
// JSON object as they stand.
// Invariants: a call begins at most once; streamed text is never taken back
// (a preview that would is ignored).
// Threading: one owner. Tested by tests/chat/output_parser_test.cc and
// tests/chat/split_invariance_test.cc.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "chat/output/message_builder.h"
#include "chat/output/tool_syntax.h"

namespace met {

class CallStream {
 public:
  bool began() const { return index_.has_value(); }
  void update(std::optional<CallPreview> preview, MessageBuilder& builder, std::vector<ParseEvent>& events);
  // Ends the stream. Returns false when `calls` (nullptr: the body was
  // malformed) do not continue the streamed call; its arguments were then
  // closed, and the caller keeps the markup as content.
  bool finish(const std::vector<ParsedCall>* calls, MessageBuilder& builder, std::vector<ParseEvent>& events);

 private:
  std::optional<size_t> index_;
  std::string name_;
  std::string sent_;            // the arguments streamed so far
  std::string closing_ = "{}";  // what closes sent_ into a JSON object
};

}  // namespace met
