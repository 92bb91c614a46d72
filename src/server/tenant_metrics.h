// The per-tenant families of GET /metrics, from the engine's tenant totals
// (EngineView::tenants): requests, prompt and generated tokens, prefix-cache
// query and hit tokens (counters), requests in flight and KV blocks held
// (gauges), each with a `tenant` label. Cardinality is bounded: the
// kMetricsTopTenants tenants with the most requests keep their own series and
// the rest are summed under tenant="other"; requests with no tenant are
// tenant="none".
// Threading: pure. Tested by tests/server/tenant_metrics_test.cc.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "engine/engine_view.h"

namespace prometheus {
struct MetricFamily;
}  // namespace prometheus

namespace met {

inline constexpr size_t kMetricsTopTenants = 16;

// The tenants /metrics shows: the top `top_n` by requests, then "other"
// (the rest and the engine's own "other") when there is any.
std::vector<TenantView> bounded_tenants(std::span<const TenantView> tenants, size_t top_n);

std::vector<prometheus::MetricFamily> tenant_metric_families(std::span<const TenantView> tenants,
                                                             const std::string& model_name,
                                                             size_t top_n = kMetricsTopTenants);

}  // namespace met
