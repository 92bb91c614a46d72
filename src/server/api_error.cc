// ApiError. Tested by tests/server/api_error_test.cc.
#include "server/api_error.h"

#include <utility>

namespace met {

ApiError invalid_request(std::optional<std::string> param, std::string message) {
  return ApiError{.status = 400,
                  .message = std::move(message),
                  .type = "invalid_request_error",
                  .param = std::move(param),
                  .code = std::nullopt};
}

ApiError http_error(int status, std::string message, std::optional<std::string> code) {
  const char* type = "invalid_request_error";
  if (status == 404) type = "not_found_error";
  if (status == 429) type = "rate_limit_error";
  if (status >= 500) type = "server_error";
  return ApiError{
      .status = status, .message = std::move(message), .type = type, .param = std::nullopt, .code = std::move(code)};
}

ApiError error_of(const ErrorEvent& e) {
  return e.param.has_value() ? invalid_request(e.param, e.message) : http_error(500, e.message);
}

nlohmann::ordered_json error_object(const ApiError& e) {
  nlohmann::ordered_json j;
  j["message"] = e.message;
  j["type"] = e.type;
  j["param"] = e.param ? nlohmann::ordered_json(*e.param) : nlohmann::ordered_json(nullptr);
  j["code"] = e.code ? nlohmann::ordered_json(*e.code) : nlohmann::ordered_json(nullptr);
  return j;
}

std::string dump_json(const nlohmann::ordered_json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string anthropic_error_type(int status) {
  switch (status) {
    case 401: return "authentication_error";
    case 403: return "permission_error";
    case 404: return "not_found_error";
    case 413: return "request_too_large";
    case 429: return "rate_limit_error";
    case 503:
    case 529: return "overloaded_error";
    default: return status >= 500 ? "api_error" : "invalid_request_error";
  }
}

std::string error_body(const ApiError& e, ErrorStyle style) {
  nlohmann::ordered_json j;
  if (style == ErrorStyle::kAnthropic) {
    j["type"] = "error";
    j["error"] = nlohmann::ordered_json{{"type", anthropic_error_type(e.status)}, {"message", e.message}};
  } else {
    j["error"] = error_object(e);
  }
  return dump_json(j);
}

}  // namespace met
