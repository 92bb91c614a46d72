// ApiError: an OpenAI-style error (HTTP status, message, type, param, code)
// and its JSON body {"error": {"message", "type", "param", "code"}}.
// Invariants: status is a 4xx or 5xx; type is "invalid_request_error" for 4xx
// caused by the request, "server_error" otherwise.
// Threading: plain data. Tested by tests/server/api_error_test.cc.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

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

// {"message","type","param","code"}: the object under "error".
nlohmann::ordered_json error_object(const ApiError& e);
// The whole body: {"error": {...}}.
std::string error_body(const ApiError& e);

}  // namespace met
