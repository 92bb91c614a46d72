// TopHttp: the dashboard's one port to the server, GET and POST of a path
// under the base URL with the operator's key as a bearer token, and the curl
// implementation of it. describe_http_failure() words an answer that is not
// 200 for the screen.
// Invariants: a call never throws and never blocks longer than its timeout
// (connect and whole transfer); the key goes only into the Authorization
// header and appears in no message.
// Threading: one thread per TopHttp (it owns a curl handle).
// Tested by tests/top/top_http_test.cc (against a loopback server answering
// canned JSON) and tests/top/top_tmux_test.cc.
#pragma once

#include <memory>
#include <string>

#include "core/status.h"

namespace met::top {

struct HttpAnswer {
  long status = 0;
  std::string body;
};

class TopHttp {
 public:
  virtual ~TopHttp() = default;
  // A transport failure (refused, timed out, bad URL) is an error naming the URL.
  virtual Result<HttpAnswer> get(const std::string& path) = 0;
  virtual Result<HttpAnswer> post(const std::string& path) = 0;
};

struct TopHttpOptions {
  std::string base_url;  // "http://host:port", a trailing '/' is dropped
  std::string api_key;   // empty: no Authorization header
  long timeout_ms = 3000;
};

std::unique_ptr<TopHttp> make_curl_http(const TopHttpOptions& options);

// "the server refused the key (HTTP 401): …" and the like, with the server's
// error message when the body is an OpenAI-style error.
std::string describe_http_failure(const HttpAnswer& answer, bool sent_key);

}  // namespace met::top
