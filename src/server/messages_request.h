// Anthropic's Messages API request (POST /v1/messages and
// /v1/messages/count_tokens), translated into the shared chat request: the
// body becomes the OpenAI chat JSON it means (system and content blocks as
// messages, tool_use blocks as tool_calls, tool_result blocks as tool
// messages, thinking blocks as reasoning_content, tools with input_schema as
// function tools, tool_choice, thinking as chat_template_kwargs.enable_thinking
// plus thinking_budget, stop_sequences as stop, and the sampling fields),
// which parse_openai_request then checks: every rule the chat endpoint has
// is applied once, by the same code. An error that code reports names the
// OpenAI field; it is mapped back to the Anthropic field's name.
// What is Anthropic's own is checked here: roles, block types, the shapes of
// system, tools, tool_choice and thinking, and max_tokens (required when
// creating a message). Images and documents are refused (a 400): met serves
// text models. `metadata` is accepted and ignored; thinking block signatures
// are not checked.
// Invariants: a translated request is a chat request whose messages are
// strings; stop_sequences are its engine stop strings, in order.
// Threading: pure functions. Tested by tests/server/messages_request_test.cc.
#pragma once

#include <string_view>

#include "server/json_fields.h"
#include "server/openai_request.h"

namespace met {

enum class MessagesCall { kCreate, kCountTokens };

// The OpenAI chat body an Anthropic Messages body means, or the 400 for what
// the Messages API itself does not allow. REQUIRES: body.is_object().
ApiResult<json_fields::Json> translate_messages_body(const json_fields::Json& body, MessagesCall call);

// The body parsed, translated and checked as a chat request.
ApiResult<OpenAiRequest> parse_messages_request(std::string_view body, MessagesCall call);

// `e` (raised over the translated body) with its param and message naming the
// Anthropic field ("stop" → "stop_sequences", "tools[0].function.parameters"
// → "tools[0].input_schema", "thinking_budget" → "thinking.budget_tokens", …).
ApiError to_messages_error(ApiError e);

}  // namespace met
