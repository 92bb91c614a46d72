// HarmonyParser: the OutputParser for GPT-OSS's harmony format. The output is
// a run of messages, each a header then a body:
//   <|channel|>analysis<|message|>…<|end|>                       reasoning
//   <|start|>assistant<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{…}<|call|>
//                                                                 a tool call
//   <|start|>assistant<|channel|>final<|message|>…<|return|>      content
// (the prompt already ends with "<|start|>assistant"; the recipient may also
// come before <|channel|>). With ParserOptions::starts_in_thinking the prompt
// ended with an open analysis header, so the output starts in its body. Commentary without a recipient is content. A body
// ends at <|end|>, <|call|>, <|return|> or <|start|>, or at finish.
// A call's arguments stream as they become safe (json_object_prefix) unless
// ParserOptions::stream_tool_calls is off.
// Fallbacks: a call whose body is not a JSON object goes to content verbatim
// (a streamed one also keeps its arguments closed as they stood);
// a header cut off at finish is dropped when it starts with markup ("<|") and
// is content otherwise (a model that ignored harmony).
// Invariants: see OutputParser. Threading: one owner.
// Tested by tests/chat/gpt_oss_family_test.cc.
#pragma once

#include <string>
#include <vector>

#include "chat/output/call_stream.h"
#include "chat/output/message_builder.h"
#include "chat/output/output_parser.h"

namespace met {

class HarmonyParser final : public OutputParser {
 public:
  explicit HarmonyParser(const ParserOptions& options);

  void feed(std::string_view delta, std::vector<ParseEvent>& events) override;
  ParsedMessage finish(std::vector<ParseEvent>& events) override;

 private:
  enum class Body { kReasoning, kContent, kCall };

  void drain(bool at_end, std::vector<ParseEvent>& events);
  bool step_header(bool at_end, std::vector<ParseEvent>& events);
  bool step_body(bool at_end, std::vector<ParseEvent>& events);
  void emit_body_text(std::string_view text, std::vector<ParseEvent>& events);
  void close_body(std::vector<ParseEvent>& events);

  bool parse_tool_calls_;
  bool stream_tool_calls_;
  MessageBuilder builder_;
  bool in_header_ = true;
  Body body_kind_ = Body::kContent;
  std::string pending_;
  std::string header_;     // the current message's header, for the content fallback
  std::string call_name_;
  std::string call_body_;
  CallStream stream_;
};

}  // namespace met
