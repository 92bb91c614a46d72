// OpenAI-shaped response bodies: the whole body of a non-streaming
// completion or chat completion, the SSE chunks of a streaming one
// (SseEncoder), and GET /v1/models.
// Invariants: every chunk of one response carries the same id, created and
// model; a stream ends with exactly one "data: [DONE]" event, after either a
// chunk with finish_reason (and the usage chunk when asked) or one error event.
// Threading: plain data and pure functions; an SseEncoder belongs to one
// request. Tested by tests/server/openai_response_test.cc.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "scheduler/response_sink.h"
#include "server/api_error.h"
#include "server/openai_request.h"

namespace met {

struct ResponseMeta {
  Endpoint endpoint = Endpoint::kCompletions;
  std::string id;       // "cmpl-…" or "chatcmpl-…"
  int64_t created = 0;  // Unix seconds
  std::string model;
};

inline constexpr std::string_view kSseDone = "data: [DONE]\n\n";

// "cmpl-<hex>" or "chatcmpl-<hex>" from a per-process unique number.
std::string make_response_id(Endpoint endpoint, uint64_t unique);

nlohmann::ordered_json usage_json(const Usage& u);
// The non-streaming body for the whole text and its finish.
nlohmann::ordered_json completion_body(const ResponseMeta& meta, const std::string& text, const FinishEvent& finish);
// {"object":"list","data":[{"id","object":"model","created","owned_by":"met"}]}
nlohmann::ordered_json models_body(const std::string& model, int64_t created);
// "data: <json>\n\n".
std::string sse_event(const nlohmann::ordered_json& j);

// Turns one request's events into SSE bytes, in order.
class SseEncoder {
 public:
  SseEncoder(ResponseMeta meta, bool include_usage) : meta_(std::move(meta)), include_usage_(include_usage) {}

  // The first bytes of the stream (chat: the chunk with delta.role).
  std::string start();
  // The bytes for `event` ("" for an empty delta); after a terminal event,
  // the stream's end ([DONE] included).
  std::string encode(const StreamEvent& event);
  // An error that ends the stream early (e.g. the server shuts down).
  std::string fail(const ApiError& error);

 private:
  nlohmann::ordered_json chunk(const std::string* text, bool role, const std::string* finish_reason) const;

  ResponseMeta meta_;
  bool include_usage_;
};

}  // namespace met
