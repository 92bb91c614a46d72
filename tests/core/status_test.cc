// Tests for Status and Result<T> (src/core/status.h).
#include "core/status.h"

#include <memory>
#include <string>

#include <gtest/gtest.h>

namespace met {
namespace {

Result<int> parse_positive(int v) {
  if (v <= 0) return invalid_argument("value {} is not positive", v);
  return v;
}

Result<int> doubled(int v) {
  MET_ASSIGN_OR_RETURN(int x, parse_positive(v));
  return 2 * x;
}

Status check_both(int a, int b) {
  MET_RETURN_IF_ERROR(parse_positive(a).status());
  MET_RETURN_IF_ERROR(parse_positive(b).status());
  return ok_status();
}

TEST(Status, DefaultIsOkWithNoMessage) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.to_string(), "ok");
}

TEST(Status, ErrorCarriesCodeAndFormattedMessage) {
  Status s = data_loss("tensor '{}' past end at offset {}", "w", 42);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_EQ(s.message(), "tensor 'w' past end at offset 42");
  EXPECT_EQ(s.to_string(), "data loss: tensor 'w' past end at offset 42");
}

TEST(Status, WithPrefixSaysWhereTheErrorHappened) {
  Status s = not_found("missing key 'x'").with_prefix("model.gguf");
  EXPECT_EQ(s.message(), "model.gguf: missing key 'x'");
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_TRUE(ok_status().with_prefix("ignored").ok());
}

TEST(Result, HoldsValueOrError) {
  EXPECT_EQ(*parse_positive(3), 3);
  Result<int> bad = parse_positive(-1);
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "value -1 is not positive");
}

TEST(Result, AssignOrReturnPropagatesTheFirstError) {
  EXPECT_EQ(*doubled(4), 8);
  EXPECT_EQ(doubled(0).status().code(), StatusCode::kInvalidArgument);
}

TEST(Result, ReturnIfErrorStopsAtTheFirstFailure) {
  EXPECT_TRUE(check_both(1, 2).ok());
  EXPECT_EQ(check_both(1, -5).message(), "value -5 is not positive");
}

TEST(Result, HoldsMoveOnlyValues) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(7);
  ASSERT_TRUE(r.ok());
  std::unique_ptr<int> p = std::move(r).value();
  EXPECT_EQ(*p, 7);
}

TEST(ResultDeathTest, ValueOfAnErrorAborts) {
  Result<int> bad = parse_positive(0);
  EXPECT_DEATH((void)bad.value(), "value 0 is not positive");
}

}  // namespace
}  // namespace met
