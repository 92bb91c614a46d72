// Format detection: which ChatFormat a model's output uses, decided from its
// chat template's source (the markup the template writes for assistant tool
// calls and thinking) and, optionally, the vocabulary's special tokens; and
// whether a rendered prompt leaves generation inside thinking.
// Invariants: pure functions; an unknown template gives ChatFamily::kGeneric.
// Threading: any. Tested by tests/chat/format_detection_test.cc (against every
// template in ../shared/chat-templates).
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "chat/output/chat_format.h"

namespace met {

// `special_tokens`: the vocab's control-token strings; when the template shows
// no think markers but the vocab has <think> and </think>, those are used.
ChatFormat detect_chat_format(std::string_view template_source, std::span<const std::string> special_tokens = {});

// True when the rendered prompt (or its tail) ends inside thinking: its last
// think-start comes after its last think-end (Qwen3's and DeepSeek-R1's
// generation prompts end with "<think>\n"). For harmony, whose channels say
// what each message is, only when the prompt ends with an open analysis
// message's header ("<|channel|>analysis<|message|>", which met adds when it
// controls the reasoning: server/harmony_controls.h).
bool generation_starts_in_thinking(std::string_view prompt_tail, const ChatFormat& format);

}  // namespace met
