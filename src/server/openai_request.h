// OpenAiRequest: the body of POST /v1/completions or /v1/chat/completions,
// parsed and checked for form: every known field has the right type and
// range (an error names it in `param`), unknown fields are ignored, null is
// the same as absent. Tokenizing and the chat template come after
// (PromptBuilder); the context is checked by the engine at submit.
// Invariants: a parsed completion has 1 to 32 prompts (a batch), a chat
// request its messages (each content a string); prompts x n <= 32 choices.
// Threading: pure functions. Tested by tests/server/openai_request_test.cc.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "request/engine_request.h"
#include "server/api_error.h"
#include "server/agent_fields.h"
#include "server/sampling_fields.h"

namespace met {

enum class Endpoint { kCompletions, kChatCompletions };

// OpenAI's default max_tokens for /v1/completions.
inline constexpr int32_t kDefaultCompletionMaxTokens = 16;

using CompletionPrompt = std::variant<std::string, std::vector<TokenId>>;

struct OpenAiRequest {
  Endpoint endpoint = Endpoint::kCompletions;
  std::vector<CompletionPrompt> prompts;           // completions: text or token ids each
  nlohmann::ordered_json messages;                 // chat: [{role, content: string, ...}]
  std::string model;                               // as sent ("" when absent)
  int32_t n = 1;                      // choices per prompt, each its own sequence
  bool has_seed = false;              // `seed` was given (else each request draws its own)
  bool stream = false;
  bool include_usage = false;         // stream_options.include_usage
  std::optional<int32_t> max_tokens;  // nullopt: the endpoint's default
  EngineRequest engine;               // every field but prompt and max_tokens
  SamplingText sampling_text;         // sampler fields given as text, tokenized by PromptBuilder
  SamplingGiven sampling_given;       // the rest take the model's SamplingDefaults (PromptBuilder)
  AgentFields agent;                  // structured output, tools, reasoning knobs
  // Predicted Outputs: prediction.content, tokenized by PromptBuilder into
  // EngineRequest::prediction.
  std::optional<std::string> prediction;
};

template <typename T>
using ApiResult = std::variant<T, ApiError>;

// Parses `body` for `endpoint`: 400 for invalid UTF-8, malformed JSON, a
// non-object, or a known field of the wrong type or out of range.
ApiResult<OpenAiRequest> parse_openai_request(Endpoint endpoint, std::string_view body);

}  // namespace met
