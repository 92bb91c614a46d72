// Tool-call arguments in a chat's history: OpenAI's API sends an assistant
// turn's tool_calls[i].function.arguments as a JSON string, but many
// templates (Qwen3.5's, Hermes', Llama 3.1's) iterate or `tojson` them as a
// mapping and fail or double-encode on a string. template_wants_object_arguments
// probes a template once (as minja does for llama.cpp): a call whose string
// arguments come out verbatim keeps strings; one that renders only as an
// object gets objects. with_arguments_as rewrites a messages array to that
// form (a string that is not a JSON object stays a string).
// Invariants: pure; the probe renders with the template's own limits.
// Threading: any. Tested by tests/chat/tool_call_arguments_test.cc.
#pragma once

#include <nlohmann/json.hpp>

#include "chat/chat_template.h"

namespace met {

bool template_wants_object_arguments(const ChatTemplate& t);

// `messages` with every assistant tool call's function.arguments as a JSON
// object (`objects`) or as its JSON text.
nlohmann::ordered_json with_arguments_as(const nlohmann::ordered_json& messages, bool objects);

}  // namespace met
