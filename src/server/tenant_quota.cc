// Per-tenant quotas. Tested by tests/server/tenant_quota_test.cc.
#include "server/tenant_quota.h"

#include <fmt/format.h>

#include <charconv>

namespace met {
namespace {

Result<int64_t> positive(std::string_view v, std::string_view spec) {
  int64_t n = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size() || n <= 0 || n > (int64_t{1} << 40)) {
    return invalid_argument("--tenant-quota '{}': '{}' is not a positive whole number", spec, v);
  }
  return n;
}

// "requests=N,kv_blocks=M" (either or both).
Result<TenantLimit> parse_limit(std::string_view list, std::string_view spec) {
  TenantLimit limit;
  while (!list.empty()) {
    const size_t comma = list.find(',');
    const std::string_view item = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    const size_t eq = item.find('=');
    const std::string_view key = item.substr(0, eq);
    if (eq == std::string_view::npos || (key != "requests" && key != "kv_blocks")) {
      return invalid_argument("--tenant-quota '{}': expected requests=N and/or kv_blocks=M, got '{}'", spec, item);
    }
    MET_ASSIGN_OR_RETURN(const int64_t n, positive(item.substr(eq + 1), spec));
    if (key == "requests") {
      if (n > (int64_t{1} << 30)) return invalid_argument("--tenant-quota '{}': requests={} is too many", spec, n);
      limit.requests = static_cast<int32_t>(n);
    } else {
      limit.kv_blocks = n;
    }
  }
  if (!limit.requests && !limit.kv_blocks) {
    return invalid_argument("--tenant-quota '{}': give requests=N and/or kv_blocks=M", spec);
  }
  return limit;
}

}  // namespace

Result<TenantQuotas> TenantQuotas::parse(const std::vector<std::string>& specs) {
  TenantQuotas q;
  for (const std::string& spec : specs) {
    const size_t colon = spec.rfind(':');
    if (colon == std::string::npos || colon == 0) {
      return invalid_argument("--tenant-quota '{}': expected TENANT:requests=N,kv_blocks=M (TENANT * for all)", spec);
    }
    const std::string name = spec.substr(0, colon);
    MET_ASSIGN_OR_RETURN(const TenantLimit limit, parse_limit(std::string_view(spec).substr(colon + 1), spec));
    q.limits_kv_ = q.limits_kv_ || limit.kv_blocks.has_value();
    if (name == "*") {
      if (q.every_.has_value()) return invalid_argument("--tenant-quota: '*' is given twice");
      q.every_ = limit;
    } else if (!q.named_.emplace(name, limit).second) {
      return invalid_argument("--tenant-quota: tenant '{}' is given twice", name);
    }
  }
  return q;
}

const TenantLimit* TenantQuotas::limit_for(std::string_view tenant) const {
  const auto it = named_.find(tenant);
  if (it != named_.end()) return &it->second;
  return every_.has_value() ? &*every_ : nullptr;
}

std::optional<ApiError> TenantGate::admit(const std::string& tenant, int32_t n, int64_t kv_blocks_held) {
  const TenantLimit* limit = quotas_.limit_for(tenant);
  if (limit == nullptr) return std::nullopt;
  const std::string who = tenant.empty() ? std::string("requests without a tenant") : "tenant '" + tenant + "'";
  if (limit->kv_blocks.has_value() && kv_blocks_held >= *limit->kv_blocks) {
    return http_error(429,
                      fmt::format("{} holds {} KV cache blocks, its quota is {} (--tenant-quota); retry later", who,
                                  kv_blocks_held, *limit->kv_blocks),
                      std::string("tenant_quota_exceeded"));
  }
  if (!limit->requests.has_value()) return std::nullopt;
  MutexLock lock(mu_);
  int32_t& count = in_flight_[tenant];
  if (count + n > *limit->requests) {
    const int32_t had = count;
    if (count == 0) in_flight_.erase(tenant);
    return http_error(429,
                      fmt::format("{} has {} requests in flight and asks for {} more; its quota is {} "
                                  "(--tenant-quota); retry later",
                                  who, had, n, *limit->requests),
                      std::string("tenant_quota_exceeded"));
  }
  count += n;
  return std::nullopt;
}

void TenantGate::release(const std::string& tenant, int32_t n) {
  const TenantLimit* limit = quotas_.limit_for(tenant);
  if (limit == nullptr || !limit->requests.has_value()) return;
  MutexLock lock(mu_);
  const auto it = in_flight_.find(tenant);
  if (it == in_flight_.end()) return;
  it->second -= n;
  if (it->second <= 0) in_flight_.erase(it);
}

}  // namespace met
