// --tenant-quota's parsing and TenantGate's admission: a tenant past its
// concurrent requests or KV blocks is refused with 429 naming the quota; a
// ticket gives its slots back; tenants without a limit are never counted.
#include "server/tenant_quota.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace met {
namespace {

TEST(TenantQuotas, ParseNamedAndDefaultLimits) {
  const Result<TenantQuotas> q = TenantQuotas::parse({"acme:requests=4,kv_blocks=100", "*:requests=2"});
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_TRUE(q->limits_kv_blocks());
  ASSERT_NE(q->limit_for("acme"), nullptr);
  EXPECT_EQ(q->limit_for("acme")->requests, 4);
  EXPECT_EQ(q->limit_for("acme")->kv_blocks, 100);
  ASSERT_NE(q->limit_for("other-team"), nullptr);
  EXPECT_EQ(q->limit_for("other-team")->requests, 2);
  EXPECT_FALSE(q->limit_for("other-team")->kv_blocks.has_value());
  const Result<TenantQuotas> named_only = TenantQuotas::parse({"acme:requests=4"});
  ASSERT_TRUE(named_only.ok());
  EXPECT_EQ(named_only->limit_for("b"), nullptr);
  EXPECT_FALSE(named_only->limits_kv_blocks());
  EXPECT_TRUE(TenantQuotas().empty());
}

TEST(TenantQuotas, BadSpecsAreRefusedNamingWhatIsWrong) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"acme", "expected TENANT:"},          {"acme:", "give requests=N"},
      {"acme:requests=0", "positive"},       {"acme:requests=x", "positive"},
      {"acme:tokens=5", "requests=N and/or"}, {":requests=1", "expected TENANT:"},
  };
  for (const auto& [spec, says] : cases) {
    const Result<TenantQuotas> q = TenantQuotas::parse({spec});
    ASSERT_FALSE(q.ok()) << spec;
    EXPECT_NE(q.status().message().find(says), std::string::npos) << spec << ": " << q.status().message();
  }
  EXPECT_FALSE(TenantQuotas::parse({"a:requests=1", "a:requests=2"}).ok());
  EXPECT_FALSE(TenantQuotas::parse({"*:requests=1", "*:requests=2"}).ok());
}

TEST(TenantGate, ATenantPastItsRequestsIsRefusedUntilATicketGivesSlotsBack) {
  Result<TenantQuotas> q = TenantQuotas::parse({"acme:requests=3"});
  ASSERT_TRUE(q.ok());
  TenantGate gate(std::move(*q));
  EXPECT_FALSE(gate.admit("acme", 2, 0).has_value());
  {
    TenantTicket held(&gate, "acme", 2);
    const std::optional<ApiError> over = gate.admit("acme", 2, 0);
    ASSERT_TRUE(over.has_value());
    EXPECT_EQ(over->status, 429);
    EXPECT_EQ(over->code, "tenant_quota_exceeded");
    EXPECT_NE(over->message.find("tenant 'acme' has 2 requests in flight"), std::string::npos) << over->message;
    EXPECT_FALSE(gate.admit("acme", 1, 0).has_value());
    gate.release("acme", 1);
  }
  EXPECT_FALSE(gate.admit("acme", 3, 0).has_value()) << "every slot was given back";
  gate.release("acme", 3);
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(gate.admit("unlimited", 5, 1 << 20).has_value());
}

TEST(TenantGate, ATenantHoldingItsKvBlocksIsRefused) {
  Result<TenantQuotas> q = TenantQuotas::parse({"*:kv_blocks=64"});
  ASSERT_TRUE(q.ok());
  TenantGate gate(std::move(*q));
  EXPECT_FALSE(gate.admit("a", 1, 63).has_value());
  const std::optional<ApiError> over = gate.admit("a", 1, 64);
  ASSERT_TRUE(over.has_value());
  EXPECT_EQ(over->status, 429);
  EXPECT_NE(over->message.find("64 KV cache blocks"), std::string::npos) << over->message;
  EXPECT_TRUE(gate.admit("", 1, 64).has_value()) << "requests without a tenant share one limit";
}

}  // namespace
}  // namespace met
