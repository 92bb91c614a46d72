// ApiFront and ResponseEncoder: what one generation API puts around the
// request path that every API shares. An API's front parses its own body and
// translates it into an OpenAiRequest (a completion or a chat: the same
// validation, templating, output controls and sampling for all), names its
// responses' ids and error shape, and gives the ResponseEncoder that writes
// the response in the API's own form, streamed (SSE events) or whole.
// The fronts: OpenAI's completions and chat completions (openai_front.h),
// the Responses API (responses_front.h) and Anthropic's Messages API
// (messages_front.h).
// Invariants: encoder() is called at most once, after a successful parse();
// an encoder sees each choice's events in order, then nothing after the
// stream's end (the last finish or an error).
// Threading: one front per HTTP request, on its connection's strand.
// Tested through the fronts' tests and `met serve`.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "request/stream_event.h"
#include "server/api_error.h"
#include "server/openai_request.h"
#include "server/openai_response.h"

namespace met {

// Writes one request's response: SSE bytes as its choices' events come, or
// one JSON body from all of them.
class ResponseEncoder {
 public:
  virtual ~ResponseEncoder() = default;

  // Streaming: the first bytes of the stream.
  virtual std::string start() = 0;
  // Streaming: the bytes for choice `index`'s `event` ("" for nothing to
  // send); after the last choice's finish, the stream's end; an error event
  // ends the whole stream.
  virtual std::string encode(size_t index, const StreamEvent& event) = 0;
  // Streaming: an error that ends the stream early.
  virtual std::string fail(const ApiError& error) = 0;
  // Not streaming: the whole body. REQUIRES: every choice has its finish.
  virtual std::string body(std::span<const ChoiceOutput> choices) = 0;
};

class ApiFront {
 public:
  virtual ~ApiFront() = default;

  // The body parsed, checked and translated into the shared request form.
  virtual ApiResult<OpenAiRequest> parse(std::string_view body) = 0;
  // The response's id from a per-process unique number.
  virtual std::string response_id(uint64_t unique) const = 0;
  virtual ErrorStyle error_style() const { return ErrorStyle::kOpenAi; }
  // The field a prompt over the context is blamed on ("messages" for a chat,
  // none for a completion's prompt).
  virtual std::optional<std::string> prompt_param(Endpoint endpoint) const {
    return endpoint == Endpoint::kChatCompletions ? std::optional<std::string>("messages") : std::nullopt;
  }
  // The request's response writer. REQUIRES: parse() succeeded.
  virtual std::unique_ptr<ResponseEncoder> encoder(ResponseMeta meta, bool streaming) = 0;
};

}  // namespace met
