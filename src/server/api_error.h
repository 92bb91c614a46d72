// ApiError: an OpenAI-style error (HTTP status, message, type, param, code)
// and its JSON body {"error": {"message", "type", "param", "code"}}, or, for
// Anthropic's Messages API, {"type": "error", "error": {"type", "message"}}
// with Anthropic's error type for the status.
// Invariants: status is a 4xx or 5xx; type is "invalid_request_error" for 4xx
// caused by the request, "server_error" otherwise.
// Threading: plain data. Tested by tests/server/api_error_test.cc.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "request/stream_event.h"

namespace met {

struct ApiError {
  int status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::optional<std::string> param;  // the request field at fault, if one is
  std::optional<std::string> code;
};

// 400 invalid_request_error naming `param` (nullopt: the request as a whole).
ApiError invalid_request(std::optional<std::string> param, std::string message);
// An error of `status` with the type that status implies.
ApiError http_error(int status, std::string message, std::optional<std::string> code = std::nullopt);
// A generation's error frame: invalid_request naming ErrorEvent::param when
// the request caused it, else a 500.
ApiError error_of(const ErrorEvent& e);

// {"message","type","param","code"}: the object under "error".
nlohmann::ordered_json error_object(const ApiError& e);
// A response body's JSON text (invalid UTF-8 replaced, never thrown on).
std::string dump_json(const nlohmann::ordered_json& j);

// The API whose error shape a body takes.
enum class ErrorStyle { kOpenAi, kAnthropic };

// The whole body: {"error": {...}}, or Anthropic's.
std::string error_body(const ApiError& e, ErrorStyle style = ErrorStyle::kOpenAi);
// Anthropic's error type for an HTTP status ("invalid_request_error",
// "authentication_error", "not_found_error", "rate_limit_error", "api_error", …).
std::string anthropic_error_type(int status);

}  // namespace met
