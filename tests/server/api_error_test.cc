// Tests for ApiError and its OpenAI-style body.
#include "server/api_error.h"

#include <gtest/gtest.h>

namespace met {
namespace {

TEST(ApiError, InvalidRequestNamesItsParam) {
  const auto j = nlohmann::json::parse(error_body(invalid_request("top_p", "'top_p' must be in (0, 1]")));
  EXPECT_EQ(j["error"]["message"], "'top_p' must be in (0, 1]");
  EXPECT_EQ(j["error"]["type"], "invalid_request_error");
  EXPECT_EQ(j["error"]["param"], "top_p");
  EXPECT_TRUE(j["error"]["code"].is_null());
}

TEST(ApiError, AWholeRequestErrorHasANullParam) {
  const ApiError e = invalid_request(std::nullopt, "bad");
  EXPECT_EQ(e.status, 400);
  EXPECT_TRUE(nlohmann::json::parse(error_body(e))["error"]["param"].is_null());
}

TEST(ApiError, TheStatusChoosesTheType) {
  EXPECT_EQ(http_error(404, "x").type, "not_found_error");
  EXPECT_EQ(http_error(413, "x").type, "invalid_request_error");
  EXPECT_EQ(http_error(429, "x").type, "rate_limit_error");
  EXPECT_EQ(http_error(500, "x").type, "server_error");
  EXPECT_EQ(http_error(503, "x").status, 503);
}

}  // namespace
}  // namespace met
