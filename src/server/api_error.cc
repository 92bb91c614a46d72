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

nlohmann::ordered_json error_object(const ApiError& e) {
  nlohmann::ordered_json j;
  j["message"] = e.message;
  j["type"] = e.type;
  j["param"] = e.param ? nlohmann::ordered_json(*e.param) : nlohmann::ordered_json(nullptr);
  j["code"] = e.code ? nlohmann::ordered_json(*e.code) : nlohmann::ordered_json(nullptr);
  return j;
}

std::string error_body(const ApiError& e) {
  nlohmann::ordered_json j;
  j["error"] = error_object(e);
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace met
