// CorsPolicy. Tested by tests/server/cors_test.cc.
#include "server/cors.h"

#include <algorithm>

namespace met {
namespace {

bool is_origin(std::string_view o) {
  const size_t scheme_end = o.find("://");
  if (scheme_end == std::string_view::npos || scheme_end == 0) return false;
  const std::string_view rest = o.substr(scheme_end + 3);
  return !rest.empty() && rest.find('/') == std::string_view::npos;
}

}  // namespace

Result<CorsPolicy> CorsPolicy::create(std::vector<std::string> origins) {
  for (const std::string& o : origins) {
    if (o != "*" && !is_origin(o)) {
      return invalid_argument("--cors-origins '{}' is not * or an origin such as http://localhost:3000", o);
    }
  }
  CorsPolicy p;
  p.origins_ = std::move(origins);
  return p;
}

std::optional<std::string> CorsPolicy::allowed_origin(std::string_view origin) const {
  if (origin.empty() || !enabled()) return std::nullopt;
  if (std::find(origins_.begin(), origins_.end(), "*") != origins_.end()) return std::string("*");
  if (std::find(origins_.begin(), origins_.end(), origin) != origins_.end()) return std::string(origin);
  return std::nullopt;
}

CorsHeaders CorsPolicy::response_headers(std::string_view origin) const {
  CorsHeaders h;
  if (const std::optional<std::string> allowed = allowed_origin(origin)) {
    h.emplace_back("Access-Control-Allow-Origin", *allowed);
    if (*allowed != "*") h.emplace_back("Vary", "Origin");
  }
  return h;
}

bool CorsPolicy::is_preflight(std::string_view method, std::string_view origin, std::string_view request_method) const {
  return method == "OPTIONS" && !request_method.empty() && allowed_origin(origin).has_value();
}

CorsHeaders CorsPolicy::preflight_headers(std::string_view origin) const {
  CorsHeaders h = response_headers(origin);
  h.emplace_back("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
  h.emplace_back("Access-Control-Allow-Headers", "Authorization, x-api-key, Content-Type");
  h.emplace_back("Access-Control-Max-Age", "600");
  return h;
}

}  // namespace met
