// CorsPolicy: which browser origins may call the API (--cors-origins), and
// the headers that say so. Off (no origins) by default: browsers then keep
// other sites' pages from reading responses. A listed origin (or "*") gets
// Access-Control-Allow-Origin on every response, and its preflight OPTIONS
// is answered without an API key, allowing Authorization, x-api-key and
// Content-Type.
// Threading: immutable after create(); any thread.
// Tested by tests/server/cors_test.cc.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

namespace met {

// (name, value) pairs, as http_io.h's ExtraHeaders.
using CorsHeaders = std::vector<std::pair<std::string, std::string>>;

class CorsPolicy {
 public:
  CorsPolicy() = default;  // off
  // Each origin is "*" or scheme://host[:port] with no path; the message
  // names a bad one.
  static Result<CorsPolicy> create(std::vector<std::string> origins);

  bool enabled() const { return !origins_.empty(); }
  // The value of Access-Control-Allow-Origin for a request from `origin`
  // (empty: no Origin header), or nullopt when it may not read the response.
  std::optional<std::string> allowed_origin(std::string_view origin) const;
  // Headers for any response to a request from `origin`.
  CorsHeaders response_headers(std::string_view origin) const;
  // Whether a request with this method, Origin and
  // Access-Control-Request-Method is a preflight this policy answers (204).
  bool is_preflight(std::string_view method, std::string_view origin, std::string_view request_method) const;
  // The preflight answer's headers.
  CorsHeaders preflight_headers(std::string_view origin) const;

 private:
  std::vector<std::string> origins_;
};

}  // namespace met
