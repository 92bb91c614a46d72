// The per-tenant /metrics families: one series per tenant with its totals,
// the top ones by requests kept apart and the rest summed as "other",
// requests without a tenant labelled "none", nothing at all without tenants.
#include "server/tenant_metrics.h"

#include "server/server_metrics.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace met {
namespace {

TenantView tenant(std::string name, int64_t requests, int64_t blocks) {
  TenantView t;
  t.tenant = std::move(name);
  t.requests = requests;
  t.output_tokens = requests * 10;
  t.kv_blocks = blocks;
  return t;
}

TEST(TenantMetrics, TheTopTenantsKeepTheirSeriesAndTheRestAreOther) {
  const std::vector<TenantView> all = {tenant("a", 5, 1), tenant("b", 9, 2), tenant("c", 1, 4), tenant("", 7, 8),
                                       tenant("other", 2, 16)};
  const std::vector<TenantView> shown = bounded_tenants(all, 2);
  ASSERT_EQ(shown.size(), 3u);
  EXPECT_EQ(shown[0].tenant, "b");
  EXPECT_EQ(shown[1].tenant, "none");
  EXPECT_EQ(shown[2].tenant, "other");
  EXPECT_EQ(shown[2].requests, 5 + 1 + 2);
  EXPECT_EQ(shown[2].kv_blocks, 1 + 4 + 16);
  EXPECT_EQ(shown[2].output_tokens, 80);
}

TEST(TenantMetrics, EachFamilyHasATenantLabelledSeries) {
  const std::vector<TenantView> all = {tenant("acme", 3, 12)};
  const std::string s = ServerMetrics("m").render(EngineStatsSnapshot{}, all);
  EXPECT_NE(s.find("met:tenant_requests_total{model_name=\"m\",tenant=\"acme\"} 3"), std::string::npos) << s;
  EXPECT_NE(s.find("met:tenant_generation_tokens_total{model_name=\"m\",tenant=\"acme\"} 30"), std::string::npos);
  EXPECT_NE(s.find("met:tenant_kv_cache_blocks_used{model_name=\"m\",tenant=\"acme\"} 12"), std::string::npos);
  EXPECT_NE(s.find("# TYPE met:tenant_kv_cache_blocks_used gauge"), std::string::npos);
  EXPECT_EQ(ServerMetrics("m").render(EngineStatsSnapshot{}).find("met:tenant_"), std::string::npos);
}

}  // namespace
}  // namespace met
