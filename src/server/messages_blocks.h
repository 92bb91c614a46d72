// MessageBlocks: one assistant turn's content blocks in Anthropic's Messages
// API, made from the chat output's ParseEvents (chat_shaper.h) as Anthropic
// streams them: content_block_start, its deltas (thinking_delta, text_delta,
// input_json_delta), then content_block_stop, block after block with indexes
// 0, 1, 2, …; a thinking block ends with a signature_delta (an empty
// signature: met signs nothing). A whole response's content is the fold of
// the same events (ContentFold), so streamed and whole answers agree.
// Invariants: at most one block is open; a block's deltas come between its
// start and its stop; reasoning or text that is only whitespace opens no
// block (it is kept back and sent with what follows it in the same block,
// else dropped); tool-use ids read "toolu_…".
// Threading: one per response, on its connection's strand.
// Tested by tests/server/messages_encoder_test.cc.
#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "chat/output/parsed_message.h"

namespace met {

class MessageBlocks {
 public:
  using Json = nlohmann::ordered_json;

  // Appends the stream events (each {"type": "content_block_…", …}) that
  // `event` decides to `out`.
  void add(const ParseEvent& event, std::vector<Json>& out);
  // Closes the open block, if any (the turn has ended).
  void close(std::vector<Json>& out);

 private:
  enum class Kind { kNone, kThinking, kText, kToolUse };

  void open(Kind kind, Json block, std::vector<Json>& out);
  // Reasoning or text: opens its block once there is more than whitespace.
  void add_text(Kind kind, const std::string& text, std::vector<Json>& out);

  Kind open_ = Kind::kNone;
  size_t num_blocks_ = 0;
  Kind held_kind_ = Kind::kNone;
  std::string held_;                      // whitespace waiting for its block
  std::map<size_t, size_t> tool_blocks_;  // tool call index → its block's index
};

// Anthropic's id for a tool call ("call_x" → "toolu_x").
std::string tool_use_id(const std::string& call_id);

// A whole message's "content" array, folded from its stream events as a
// client folds them; a tool_use block's input is its partial_json parsed
// ({} when that is not a JSON object).
class ContentFold {
 public:
  using Json = nlohmann::ordered_json;

  void add(const Json& event);
  Json take() { return std::move(content_); }

 private:
  Json content_ = Json::array();
  std::map<size_t, std::string> input_json_;  // tool_use block index → its partial_json so far
};

}  // namespace met
