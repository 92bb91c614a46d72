// MessagesEncoder: the ResponseEncoder of Anthropic's Messages API. Whole:
// {"id": "msg_…", "type": "message", "role": "assistant", "model",
// "content": [thinking, text and tool_use blocks], "stop_reason",
// "stop_sequence", "usage"}. Streamed: SSE events "event: NAME\ndata: JSON"
// in the documented order: message_start (the message with no content and
// the prompt's input_tokens), each content block's content_block_start,
// deltas and content_block_stop (MessageBlocks), then message_delta
// (stop_reason, stop_sequence, the final usage) and message_stop; an error
// ends the stream as one "event: error" with Anthropic's error body.
// stop_reason: "max_tokens" when the output was cut (length, or the
// deadline), "stop_sequence" (naming it) when one of stop_sequences ended
// it, "tool_use" when the turn ended with a tool call, else "end_turn".
// Usage: input_tokens are the prompt tokens not read from the prefix cache,
// cache_read_input_tokens those that were; met writes no cache entries
// a client pays for, so cache_creation_input_tokens is 0.
// Invariants: one message, one choice; nothing is written after
// message_stop or an error event.
// Threading: one per request, on its connection's strand.
// Tested by tests/server/messages_encoder_test.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "server/api_front.h"
#include "server/chat_shaper.h"
#include "server/messages_blocks.h"

namespace met {

struct MessagesStop {
  std::string reason;                  // "end_turn", "max_tokens", "stop_sequence", "tool_use"
  std::optional<std::string> sequence;  // the stop sequence that matched
};

MessagesStop messages_stop(const FinishEvent& f, bool ended_with_tool_call, std::span<const std::string> stops);
nlohmann::ordered_json messages_usage_json(const Usage& u);
// "msg_<hex>" from a per-process unique number.
std::string make_message_id(uint64_t unique);
// "event: <j.type>\ndata: <j>\n\n".
std::string messages_sse_event(const nlohmann::ordered_json& j);

class MessagesEncoder final : public ResponseEncoder {
 public:
  // `stop_sequences`: the request's, in order (FinishEvent::stop_string_index
  // points into them).
  MessagesEncoder(ResponseMeta meta, std::vector<std::string> stop_sequences);

  std::string start() override;
  std::string encode(size_t index, const StreamEvent& event) override;
  std::string fail(const ApiError& error) override;
  std::string body(std::span<const ChoiceOutput> choices) override;

 private:
  using Json = nlohmann::ordered_json;

  // The message without content: message_start's, and the whole body's base.
  Json message(const Json& usage) const;
  // Turns `text` into stream events appended to `out`.
  void feed(std::string_view text, std::vector<Json>& out);
  // Flushes the output's end into `out`; true when it ended with a tool call.
  bool finish(std::vector<Json>& out);

  ResponseMeta meta_;
  std::vector<std::string> stop_sequences_;
  std::unique_ptr<ChatShaper> shaper_;  // with meta.shape; else the text is all content
  MessageBlocks blocks_;
  std::vector<ParseEvent> events_;  // scratch
  bool done_ = false;
};

}  // namespace met
