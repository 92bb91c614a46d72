// ResponsesRequest: the body of POST /v1/responses (OpenAI's Responses API)
// translated into the shared chat request, so validation, the chat
// template, tools, output controls, thinking and sampling are chat's own:
// `instructions` becomes a system message first; `input` (a string, or
// items: messages with text parts, function_call, function_call_output,
// reasoning, and item_reference to a kept response's output item, which is
// resolved into that item) becomes messages, an assistant turn's reasoning, text and calls
// merged into one assistant message; flat function `tools` and
// `tool_choice` take chat's nested shape; `text.format` becomes
// `response_format`; `reasoning.effort` becomes `reasoning_effort` ("none":
// chat_template_kwargs.enable_thinking false); `max_output_tokens`,
// `temperature`, `top_p`, `stream`, `user` and a few of met's own fields
// (seed, stop, top_k, min_p, penalties, chat_template_kwargs,
// thinking_budget, …) carry over. `previous_response_id` prepends the
// conversation a stored response ended (its instructions are not carried).
// Responses' own fields are checked here (`store`, `metadata`,
// `truncation`, `background`, tool types, item shapes); the rest by
// parse_openai_request, whose error `param`s are renamed to the Responses
// fields ("messages…" -> "input", "max_tokens" -> "max_output_tokens", …).
// Invariants: a parsed request is a chat request with at least one message;
// `conversation` holds Responses items only (what a follow-up prepends).
// Threading: pure functions (the lookup is the caller's). Tested by
// tests/server/responses_request_test.cc.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "server/openai_request.h"

namespace met {

struct ResponsesRequest {
  OpenAiRequest chat;                   // the shared request form
  nlohmann::ordered_json echo;          // the fields a response object repeats, in OpenAI's order
  nlohmann::ordered_json conversation;  // Responses items: the previous response's, then this input
  bool store = true;
  bool reasoning_summary = false;       // reasoning.summary was asked
};

// The conversation a stored response ended; nullopt when it is unknown.
using PreviousConversation = std::function<std::optional<nlohmann::ordered_json>(const std::string& id)>;

// A kept response's output item by its id (an input item_reference); nullopt
// when unknown.
using ItemLookup = std::function<std::optional<nlohmann::ordered_json>(const std::string& item_id)>;

ApiResult<ResponsesRequest> parse_responses_request(std::string_view body, const PreviousConversation& previous,
                                                    const ItemLookup& item = {});

// Responses items as chat messages (for input[first_input...] errors name
// input[i - first_input]; items before it are stored ones).
ApiResult<nlohmann::ordered_json> items_to_messages(const nlohmann::ordered_json& items, size_t first_input);

}  // namespace met
