// Per-tenant quotas (--tenant-quota, repeatable): `NAME:requests=N`,
// `NAME:kv_blocks=M` or both (`NAME:requests=N,kv_blocks=M`); NAME `*` gives
// every tenant not named its own such limit (requests with no tenant count
// as one tenant). TenantGate applies them at admission: a request whose
// tenant already has N engine requests in flight, or holds M KV blocks or
// more, is refused with 429 and Retry-After, and nothing else changes.
// Invariants: a slot taken is given back once (TenantTicket); a tenant with
// no limit is never counted.
// Threading: TenantQuotas is immutable after parse(); TenantGate from any
// thread (one mutex, per request, never per token).
// Tested by tests/server/tenant_quota_test.cc and through `met serve` by
// tests/server/serve_operator_test.cc.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/mutex.h"
#include "core/status.h"
#include "server/api_error.h"

namespace met {

struct TenantLimit {
  std::optional<int32_t> requests;   // engine requests in flight at once
  std::optional<int64_t> kv_blocks;  // KV blocks held, above which new requests wait outside
};

class TenantQuotas {
 public:
  TenantQuotas() = default;  // no quotas
  static Result<TenantQuotas> parse(const std::vector<std::string>& specs);

  bool empty() const { return named_.empty() && !every_.has_value(); }
  bool limits_kv_blocks() const { return limits_kv_; }
  // `tenant`'s limit (its own, else `*`'s); null when it has none.
  const TenantLimit* limit_for(std::string_view tenant) const;

 private:
  std::map<std::string, TenantLimit, std::less<>> named_;
  std::optional<TenantLimit> every_;
  bool limits_kv_ = false;
};

// The Retry-After (seconds) of a quota's 429.
inline constexpr int kQuotaRetryAfterSeconds = 1;

class TenantGate {
 public:
  explicit TenantGate(TenantQuotas quotas) : quotas_(std::move(quotas)) {}
  const TenantQuotas& quotas() const { return quotas_; }
  // Takes `n` request slots of `tenant` (which holds `kv_blocks_held` now), or
  // the 429 that says which quota it is over.
  std::optional<ApiError> admit(const std::string& tenant, int32_t n, int64_t kv_blocks_held);
  // Gives back slots admit() took.
  void release(const std::string& tenant, int32_t n);

 private:
  const TenantQuotas quotas_;
  Mutex mu_;
  std::unordered_map<std::string, int32_t> in_flight_ GUARDED_BY(mu_);
};

// Slots taken for one HTTP request, given back when it ends.
class TenantTicket {
 public:
  TenantTicket() = default;
  TenantTicket(TenantGate* gate, std::string tenant, int32_t n) : gate_(gate), tenant_(std::move(tenant)), n_(n) {}
  TenantTicket(TenantTicket&& o) noexcept : gate_(o.gate_), tenant_(std::move(o.tenant_)), n_(o.n_) {
    o.gate_ = nullptr;
  }
  TenantTicket& operator=(TenantTicket&&) = delete;
  TenantTicket(const TenantTicket&) = delete;
  ~TenantTicket() {
    if (gate_ != nullptr) gate_->release(tenant_, n_);
  }

 private:
  TenantGate* gate_ = nullptr;
  std::string tenant_;
  int32_t n_ = 0;
};

}  // namespace met
