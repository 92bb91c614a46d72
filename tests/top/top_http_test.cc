// The curl TopHttp against a loopback server answering canned JSON: the
// bearer key, GET and POST, a refused connection as an error naming the URL,
// and describe_http_failure's wording.
#include "top/top_http.h"

#include <gtest/gtest.h>

#include "fake_requests_server.h"

namespace met::top {
namespace {

TEST(CurlTopHttp, GetsWithTheBearerKeyAndReturnsStatusAndBody) {
  testing::FakeRequestsServer server;
  ASSERT_NE(server.port(), 0);
  server.answer(200, R"({"ok":true})");
  auto http = make_curl_http({server.url() + "/", "adm", 2000});
  const Result<HttpAnswer> a = http->get("/v1/requests");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->status, 200);
  EXPECT_EQ(a->body, R"({"ok":true})");
  server.answer(404, "{}");
  const Result<HttpAnswer> b = http->post("/v1/requests/17/cancel");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->status, 404);
  const auto seen = server.seen();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].line, "GET /v1/requests HTTP/1.1");
  EXPECT_EQ(seen[0].authorization, "Bearer adm");
  EXPECT_EQ(seen[1].line, "POST /v1/requests/17/cancel HTTP/1.1");
}

TEST(CurlTopHttp, SendsNoAuthorizationWithoutAKey) {
  testing::FakeRequestsServer server;
  server.answer(200, "{}");
  auto http = make_curl_http({server.url(), "", 2000});
  ASSERT_TRUE(http->get("/v1/requests").ok());
  ASSERT_EQ(server.seen().size(), 1u);
  EXPECT_EQ(server.seen()[0].authorization, "");
}

TEST(CurlTopHttp, AServerThatIsNotThereIsAnErrorNamingTheUrl) {
  uint16_t port = 0;
  {
    testing::FakeRequestsServer gone;
    port = gone.port();
  }
  auto http = make_curl_http({"http://127.0.0.1:" + std::to_string(port), "secret-key", 1000});
  const Result<HttpAnswer> a = http->get("/v1/requests");
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("cannot reach http://127.0.0.1:" + std::to_string(port) + "/v1/requests"),
            std::string::npos)
      << a.status().message();
  EXPECT_EQ(a.status().message().find("secret-key"), std::string::npos);
}

TEST(DescribeHttpFailure, WordsARefusedKeyWithTheServersMessage) {
  const std::string body = R"({"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}})";
  const std::string refused = describe_http_failure({401, body}, /*sent_key=*/true);
  EXPECT_NE(refused.find("the server refused the key (HTTP 401: Incorrect API key provided)"), std::string::npos)
      << refused;
  EXPECT_NE(refused.find("--api-key"), std::string::npos);
  EXPECT_NE(describe_http_failure({401, ""}, false).find("the server wants a key"), std::string::npos);
  EXPECT_NE(describe_http_failure({404, ""}, false).find("met server"), std::string::npos);
  EXPECT_EQ(describe_http_failure({503, "busy"}, false), "HTTP 503");
}

}  // namespace
}  // namespace met::top
