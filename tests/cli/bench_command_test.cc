// Tests for `met bench`: the report's shape (times are reported, never asserted).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/run_command.h"
#include "testing/shared_data.h"

namespace met {
namespace {

using testing::met_binary;
using testing::run_command;
using testing::shell_quote;

TEST(MetBench, JsonReportsPrefillAndEachBatchAndContext) {
  MET_REQUIRE_SHARED(path, "models/stories260K.gguf");
  auto r = run_command(met_binary() + " bench " + shell_quote(path) +
                       " --prompt-tokens 32 --gen-tokens 4 --batch 1,3 --context 0,40 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["prefill_tok_s"].get<double>(), 0.0);
  ASSERT_EQ(j["decode"].size(), 4u);
  EXPECT_EQ(j["decode"][0]["batch"], 1);
  EXPECT_EQ(j["decode"][1]["batch"], 3);
  EXPECT_EQ(j["decode"][3]["context"], 40);
  EXPECT_GT(j["decode"][3]["tok_s"].get<double>(), 0.0);
  EXPECT_GT(j["weight_bytes"].get<int64_t>(), 1000000);
  EXPECT_GT(j["kv_bytes"].get<int64_t>(), 0);
  EXPECT_GT(j["peak_rss_bytes"].get<int64_t>(), 0);
  EXPECT_GT(j["decode_ceiling_tok_s"].get<double>(), 0.0);
  EXPECT_LT(j["decode_step_bytes"].get<double>(), j["weight_bytes"].get<double>());
}

TEST(MetBench, BadBatchIsRefused) {
  MET_REQUIRE_SHARED(path, "models/stories260K.gguf");
  auto r = run_command(met_binary() + " bench " + shell_quote(path) + " --batch 0");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--batch 0"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace met
