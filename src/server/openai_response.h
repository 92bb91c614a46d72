// OpenAI-shaped response bodies: the whole body of a non-streaming
// completion or chat completion, the SSE chunks of a streaming one
// (SseEncoder), and GET /v1/models.
// A response has n choices (the request's `n`), each fed by its own
// sequence's events; ChoiceOutput gathers one choice for a whole body.
// Invariants: every chunk of one response carries the same id, created and
// model; a stream ends with exactly one "data: [DONE]" event, after either a
// chunk with finish_reason for every choice (and the usage chunk when asked)
// or one error event. Usage counts the prompt once and every choice's
// completion tokens.
// Threading: plain data and pure functions; an SseEncoder belongs to one
// request. Tested by tests/server/openai_response_test.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <span>
#include <string_view>
#include <vector>

#include "request/response_sink.h"
#include "server/api_error.h"
#include "server/chat_shaper.h"
#include "server/openai_request.h"
#include "tokenizer/tokenizer.h"

namespace met {

struct ResponseMeta {
  Endpoint endpoint = Endpoint::kCompletions;
  std::string id;       // "cmpl-…" or "chatcmpl-…"
  int64_t created = 0;  // Unix seconds
  std::string model;
  std::string system_fingerprint = {};  // the serving configuration's (ServerOptions)
  const Tokenizer* tokenizer = nullptr;  // for logprobs' token text; required when logprobs are sent
  // Chat: how each choice's text becomes reasoning, content and tool calls
  // (choice i's tool-call ids seeded with id_seed + i); nullopt: all content.
  std::optional<ChatShape> shape = std::nullopt;
  // Choices come n per prompt (a completion may batch prompts): usage counts
  // each prompt once.
  size_t choices_per_prompt = 1;
  size_t num_choices = 1;  // prompts x n
  size_t num_prompt_tokens = 0;  // the first prompt's (Anthropic's message_start tells it before any output)
};

// One choice of a non-streaming response, gathered from its events.
struct ChoiceOutput {
  std::string text;
  std::vector<TokenLogprob> logprobs;
  std::vector<TokenLogprob> prompt_logprobs;
  bool wants_logprobs = false;         // "logprobs" is an object (else null)
  bool wants_prompt_logprobs = false;  // the choice has vLLM's "prompt_logprobs"
  std::optional<FinishEvent> finish;

  void add(const DeltaEvent& d);
};

// Usage over all choices: each prompt once (the first of its
// `choices_per_prompt` choices), completions summed.
Usage total_usage(std::span<const Usage> per_choice, size_t choices_per_prompt);

inline constexpr std::string_view kSseDone = "data: [DONE]\n\n";

// "cmpl-<hex>" or "chatcmpl-<hex>" from a per-process unique number.
std::string make_response_id(Endpoint endpoint, uint64_t unique);

nlohmann::ordered_json usage_json(const Usage& u);
// The non-streaming body. REQUIRES: every choice has its finish.
nlohmann::ordered_json completion_body(const ResponseMeta& meta, std::span<const ChoiceOutput> choices);
// {"object":"list","data":[{"id","object":"model","created","owned_by":"met"}]}
nlohmann::ordered_json models_body(const std::string& model, int64_t created);
// "data: <json>\n\n".
std::string sse_event(const nlohmann::ordered_json& j);

// Turns one request's events (of its n choices) into SSE bytes, in order.
class SseEncoder {
 public:
  SseEncoder(ResponseMeta meta, bool include_usage, size_t num_choices = 1, bool logprobs = false);
  // The first delta of each choice carries vLLM's "prompt_logprobs" (needs
  // meta.tokenizer).
  void send_prompt_logprobs() { prompt_logprobs_ = true; }

  // The first bytes of the stream (chat: a chunk with delta.role per choice).
  std::string start();
  // The bytes for choice `index`'s `event` ("" for a delta with nothing to
  // send); after the last choice's finish, the stream's end (usage when
  // asked, then [DONE]); an error event ends the whole stream.
  std::string encode(size_t index, const StreamEvent& event);
  std::string encode(const StreamEvent& event) { return encode(0, event); }
  // An error that ends the stream early (e.g. the server shuts down).
  std::string fail(const ApiError& error);

 private:
  struct ChoiceState {
    std::optional<Usage> usage;  // set by its finish
    size_t text_offset = 0;      // completions' logprobs text_offset
    std::unique_ptr<ChatShaper> shaper;  // with meta.shape
  };
  // One chunk: `body` is the chat delta object or the completion text.
  nlohmann::ordered_json chunk(size_t index, nlohmann::ordered_json body, const std::string* finish_reason,
                               const DeltaEvent* logprobs_from);
  std::string encode_delta(size_t index, const DeltaEvent& d);
  std::string encode_finish(size_t index, const FinishEvent& f);

  ResponseMeta meta_;
  bool include_usage_;
  bool logprobs_;
  bool prompt_logprobs_ = false;
  std::vector<ChoiceState> choices_;
  std::vector<ParseEvent> events_;  // scratch
  size_t num_finished_ = 0;
};

}  // namespace met
