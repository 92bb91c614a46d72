// Per-tenant metrics. Tested by tests/server/tenant_metrics_test.cc.
#include "server/tenant_metrics.h"

#include <prometheus/metric_family.h>

#include <algorithm>
#include <utility>

#include "engine/request_board.h"

namespace met {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

void add_into(TenantView& sum, const TenantView& t) {
  sum.requests += t.requests;
  sum.running += t.running;
  sum.prompt_tokens += t.prompt_tokens;
  sum.output_tokens += t.output_tokens;
  sum.cache_query_tokens += t.cache_query_tokens;
  sum.cache_hit_tokens += t.cache_hit_tokens;
  sum.kv_blocks += t.kv_blocks;
}

struct TenantField {
  const char* name;
  const char* help;
  MetricType type;
  int64_t TenantView::*value;
};

constexpr TenantField kFields[] = {
    {"met:tenant_requests_total", "Requests accepted, by tenant.", MetricType::Counter, &TenantView::requests},
    {"met:tenant_prompt_tokens_total", "Prompt tokens of ended requests, by tenant.", MetricType::Counter,
     &TenantView::prompt_tokens},
    {"met:tenant_generation_tokens_total", "Tokens generated for ended requests, by tenant.", MetricType::Counter,
     &TenantView::output_tokens},
    {"met:tenant_prefix_cache_queries_total", "Prompt tokens looked up in the prefix cache, by tenant.",
     MetricType::Counter, &TenantView::cache_query_tokens},
    {"met:tenant_prefix_cache_hits_total", "Prompt tokens found in the prefix cache, by tenant.",
     MetricType::Counter, &TenantView::cache_hit_tokens},
    {"met:tenant_requests_in_flight", "Requests in flight (waiting, running or swapped), by tenant.",
     MetricType::Gauge, &TenantView::running},
    {"met:tenant_kv_cache_blocks_used", "KV cache blocks held, by tenant.", MetricType::Gauge,
     &TenantView::kv_blocks},
};

}  // namespace

std::vector<TenantView> bounded_tenants(std::span<const TenantView> tenants, size_t top_n) {
  std::vector<TenantView> sorted(tenants.begin(), tenants.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const TenantView& a, const TenantView& b) { return a.requests > b.requests; });
  std::vector<TenantView> out;
  TenantView other;
  other.tenant = std::string(kOtherTenant);
  bool has_other = false;
  for (const TenantView& t : sorted) {
    if (t.tenant != kOtherTenant && out.size() < top_n) {
      out.push_back(t);
      if (out.back().tenant.empty()) out.back().tenant = "none";
      continue;
    }
    add_into(other, t);
    has_other = true;
  }
  if (has_other) out.push_back(std::move(other));
  return out;
}

std::vector<MetricFamily> tenant_metric_families(std::span<const TenantView> tenants, const std::string& model_name,
                                                 size_t top_n) {
  const std::vector<TenantView> shown = bounded_tenants(tenants, top_n);
  std::vector<MetricFamily> families;
  if (shown.empty()) return families;
  for (const TenantField& f : kFields) {
    MetricFamily family{f.name, f.help, f.type, {}};
    for (const TenantView& t : shown) {
      ClientMetric m;
      m.label = {{"model_name", model_name}, {"tenant", t.tenant}};
      const auto v = static_cast<double>(t.*f.value);
      if (f.type == MetricType::Counter) {
        m.counter.value = v;
      } else {
        m.gauge.value = v;
      }
      family.metric.push_back(std::move(m));
    }
    families.push_back(std::move(family));
  }
  return families;
}

}  // namespace met
