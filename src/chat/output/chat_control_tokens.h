// chat_control_tokens: the control tokens a vocabulary needs so that a chat
// template's markup and its model's output markers are single tokens, for
// `met make-model --chat-template` (random-weight chat models that exercise
// thinking, tool calls and grammars). They are the detected format's special
// strings (format_markers) followed by the special strings the template
// writes literally: "<|…|>" (<|im_start|>, <|python_tag|>), full-width
// "<｜…｜>" (DeepSeek), "[UPPER_CASE]" and "[/UPPER_CASE]" (Mistral's [INST],
// [TOOL_CALLS]) and "<seed:…>" tags.
// Invariants: pure; no duplicates; order is markers first, then literals by
// first appearance. Threading: any. Tested by tests/chat/chat_control_tokens_test.cc.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace met {

std::vector<std::string> chat_control_tokens(std::string_view template_source);

}  // namespace met
