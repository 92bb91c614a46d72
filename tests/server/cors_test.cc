// Tests for server/cors.h: which origins may read responses and what the
// headers say.
#include "server/cors.h"

#include <gtest/gtest.h>

namespace met {
namespace {

std::optional<std::string> header(const CorsHeaders& h, std::string_view name) {
  for (const auto& [k, v] : h) {
    if (k == name) return v;
  }
  return std::nullopt;
}

TEST(CorsPolicy, OffByDefaultAddsNoHeaderAndAnswersNoPreflight) {
  const CorsPolicy p;
  EXPECT_FALSE(p.enabled());
  EXPECT_TRUE(p.response_headers("http://evil.example").empty());
  EXPECT_FALSE(p.is_preflight("OPTIONS", "http://evil.example", "POST"));
}

TEST(CorsPolicy, AListedOriginIsEchoedWithVaryAndOthersGetNothing) {
  const CorsPolicy p = *CorsPolicy::create({"http://localhost:3000"});
  const CorsHeaders h = p.response_headers("http://localhost:3000");
  EXPECT_EQ(header(h, "Access-Control-Allow-Origin"), "http://localhost:3000");
  EXPECT_EQ(header(h, "Vary"), "Origin");
  EXPECT_TRUE(p.response_headers("http://localhost:3001").empty());
  EXPECT_TRUE(p.response_headers("").empty());  // not a browser's cross-origin request
}

TEST(CorsPolicy, AStarAllowsEveryOrigin) {
  const CorsPolicy p = *CorsPolicy::create({"*"});
  EXPECT_EQ(header(p.response_headers("https://app.example"), "Access-Control-Allow-Origin"), "*");
}

TEST(CorsPolicy, APreflightNeedsOptionsARequestMethodAndAnAllowedOrigin) {
  const CorsPolicy p = *CorsPolicy::create({"https://app.example"});
  EXPECT_TRUE(p.is_preflight("OPTIONS", "https://app.example", "POST"));
  EXPECT_FALSE(p.is_preflight("OPTIONS", "https://app.example", ""));
  EXPECT_FALSE(p.is_preflight("POST", "https://app.example", "POST"));
  EXPECT_FALSE(p.is_preflight("OPTIONS", "https://other.example", "POST"));
  const CorsHeaders h = p.preflight_headers("https://app.example");
  const std::string allowed = *header(h, "Access-Control-Allow-Headers");
  for (const char* name : {"Authorization", "x-api-key", "Content-Type"}) {
    EXPECT_NE(allowed.find(name), std::string::npos) << name;
  }
  EXPECT_NE(header(h, "Access-Control-Allow-Methods")->find("POST"), std::string::npos);
}

TEST(CorsPolicy, RefusesWhatIsNotAnOriginNamingTheFlag) {
  for (const char* bad : {"localhost", "http://a.example/path", "://x", ""}) {
    const Result<CorsPolicy> p = CorsPolicy::create({bad});
    ASSERT_FALSE(p.ok()) << bad;
    EXPECT_NE(p.status().message().find("--cors-origins"), std::string::npos);
  }
}

}  // namespace
}  // namespace met
