// The reasoning of a chat's earlier turns: OpenAI-compatible clients send an
// assistant turn's reasoning back as `reasoning_content` (as met's responses
// give it), but some templates read it from `thinking` (gpt-oss's harmony
// template, for the analysis before a tool call; LFM2.5's).
// template_reads_thinking probes a template once, as tool_call_arguments.h
// does: `thinking` comes out and `reasoning_content` does not.
// with_reasoning_as_thinking copies reasoning_content into a turn's missing
// `thinking` (llama.cpp does the same for gpt-oss).
// Invariants: pure; the probe renders with the template's own limits.
// Threading: any. Tested by tests/chat/reasoning_field_test.cc.
#pragma once

#include <nlohmann/json.hpp>

#include "chat/chat_template.h"

namespace met {

bool template_reads_thinking(const ChatTemplate& t);

// `messages` with each assistant turn's string reasoning_content also as
// `thinking`, unless the turn has its own, or has tool calls and content too
// (harmony's template refuses a call turn with both content and thinking).
nlohmann::ordered_json with_reasoning_as_thinking(const nlohmann::ordered_json& messages);

}  // namespace met
