// ChatShaper: turns one chat choice's generated text, as it streams, into
// OpenAI's message parts: delta.reasoning_content, delta.content and
// delta.tool_calls (the model family's OutputParser, chat/output/), or, for a
// forced tool call (tool_choice "required" or a named function, whose output
// is JSON by grammar: output_controls.h), the reasoning split off first (the
// family's parser with tool calls off) and the tool calls made from the JSON
// that follows it (ForcedCalls).
// finish() gives the whole message; a natural stop whose message ended with a
// tool call reads "tool_calls".
// Invariants: the concatenated deltas equal the final message's fields;
// markup never reaches content; with ChatShape::one_call, at most one call.
// Threading: one per choice, on the request's connection strand.
// Tested by tests/server/chat_shaper_test.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "chat/output/chat_format.h"
#include "chat/output/output_parser.h"
#include "chat/output/parsed_message.h"
#include "chat/output/tool_call_ids.h"
#include "server/forced_calls.h"

namespace met {

enum class ForcedTools : uint8_t { kNone, kNamed, kRequired };

// How a chat request's output becomes a message.
struct ChatShape {
  ChatFormat format;
  bool starts_in_thinking = false;
  bool parse_tool_calls = false;  // tools given and tool_choice "auto"
  ForcedTools forced = ForcedTools::kNone;
  std::string forced_name;        // ForcedTools::kNamed
  uint64_t id_seed = 0;           // tool call ids
  std::vector<std::string> tool_names;  // the request's tools: no call names another
  bool one_call = false;                // parallel_tool_calls false: calls after the first are dropped
  // Stream calls' arguments as they come (SSE); a whole body keeps only
  // complete, valid calls.
  bool stream_tool_calls = true;
};

class ChatShaper {
 public:
  explicit ChatShaper(const ChatShape& shape);

  // Appends the events (reasoning, content, tool-call begins and argument
  // pieces) that `text` decides.
  void feed(std::string_view text, std::vector<ParseEvent>& events);
  // Flushes what is held back (appended to `events`) and gives the message.
  ParsedMessage finish(std::vector<ParseEvent>& events);

 private:
  // Reasoning goes out; content is the forced calls' JSON.
  void route_forced(std::vector<ParseEvent>& from, std::vector<ParseEvent>& events);
  // ChatShape::one_call: drops the events of calls after the first.
  void keep_one_call(std::vector<ParseEvent>& events, size_t from) const;

  ChatShape shape_;
  std::unique_ptr<OutputParser> parser_;
  ToolCallIds ids_;
  std::unique_ptr<ForcedCalls> forced_;  // with ForcedTools other than kNone
  std::vector<ParseEvent> scratch_;
};

// OpenAI's chat delta objects (each {"reasoning_content"|"content"|
// "tool_calls": …}) for `events`, which it empties.
std::vector<nlohmann::ordered_json> chat_delta_json(std::vector<ParseEvent>& events);

// finish_reason with the message's tool calls taken into account.
std::string shaped_finish_reason(const std::string& engine_reason, const ParsedMessage& m);

// The message object of a non-streaming chat choice.
nlohmann::ordered_json message_json(const ParsedMessage& m);

}  // namespace met
