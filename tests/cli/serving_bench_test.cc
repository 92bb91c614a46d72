// Tests for the serving benchmark's pure parts (the run itself is tested
// through `met bench --concurrency` in bench_command_test.cc).
#include "cli/serving_bench.h"

#include <gtest/gtest.h>

namespace met {
namespace {

TEST(Percentile, IsTheNearestRank) {
  EXPECT_EQ(percentile({}, 50), 0.0);
  EXPECT_EQ(percentile({7}, 50), 7.0);
  EXPECT_EQ(percentile({7}, 99), 7.0);
  EXPECT_EQ(percentile({4, 1, 3, 2}, 50), 2.0);
  EXPECT_EQ(percentile({4, 1, 3, 2}, 99), 4.0);
  std::vector<double> hundred;
  for (int i = 100; i >= 1; --i) hundred.push_back(i);
  EXPECT_EQ(percentile(hundred, 50), 50.0);
  EXPECT_EQ(percentile(hundred, 99), 99.0);
  EXPECT_EQ(percentile(hundred, 0), 1.0);
  EXPECT_EQ(percentile(hundred, 100), 100.0);
}

TEST(ValidateServingBench, NamesTheFlagAndValue) {
  ServingBenchOptions o;
  o.concurrency = {1, 0};
  EXPECT_NE(validate_serving_bench(o).message().find("--concurrency 0"), std::string::npos);
  o.concurrency = {1};
  o.requests_per_level = -3;
  EXPECT_NE(validate_serving_bench(o).message().find("--requests-per-level -3"), std::string::npos);
  o.requests_per_level = 0;
  o.cached_prompt_tokens = -1;
  EXPECT_NE(validate_serving_bench(o).message().find("--cached-prompt-tokens -1"), std::string::npos);
  o.cached_prompt_tokens = 0;
  EXPECT_TRUE(validate_serving_bench(o).ok());
}

}  // namespace
}  // namespace met
