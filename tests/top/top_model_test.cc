// TopModel over a sequence of poll outcomes: rates start on the second good
// poll, a failure keeps the last snapshot and says why, and the next good poll
// starts the rates afresh.
#include "top/top_model.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "top_test_data.h"

namespace met::top {
namespace {

Result<HttpAnswer> ok_answer(int64_t now_ms, int64_t output_tokens) {
  nlohmann::json j = nlohmann::json::parse(testing::kRequestsJson);
  j["now_ms"] = now_ms;
  j["engine"]["output_tokens"] = output_tokens;
  return HttpAnswer{200, j.dump()};
}

TEST(TopModel, RatesComeFromTheSecondGoodPoll) {
  TopModel m(10, true);
  m.on_poll(ok_answer(1000, 100));
  ASSERT_TRUE(m.snapshot().has_value());
  EXPECT_TRUE(m.problem().empty());
  EXPECT_FALSE(m.rates().output_tokens_per_s.has_value());
  m.on_poll(ok_answer(3000, 300));
  EXPECT_DOUBLE_EQ(m.rates().output_tokens_per_s.value_or(-1), 100.0);
  ASSERT_EQ(m.history().samples().size(), 2u);
  EXPECT_DOUBLE_EQ(m.history().samples().back().output_tokens_per_s, 100.0);
  EXPECT_EQ(m.num_polls(), 2);
}

TEST(TopModel, AFailedPollKeepsTheLastSnapshotAndSaysWhy) {
  TopModel m(10, true);
  m.on_poll(ok_answer(1000, 100));
  m.on_poll(Result<HttpAnswer>(io_error("cannot reach http://x/v1/requests: Connection refused")));
  ASSERT_TRUE(m.snapshot().has_value());
  EXPECT_EQ(m.problem(), "cannot reach http://x/v1/requests: Connection refused");
  m.on_poll(ok_answer(5000, 500));
  EXPECT_TRUE(m.problem().empty());
  EXPECT_FALSE(m.rates().output_tokens_per_s.has_value()) << "no rate across the outage";
  m.on_poll(ok_answer(6000, 600));
  EXPECT_DOUBLE_EQ(m.rates().output_tokens_per_s.value_or(-1), 100.0);
}

TEST(TopModel, ARefusedKeyAndABodyThatIsNotJsonAreProblems) {
  TopModel m(10, true);
  m.on_poll(HttpAnswer{401, R"({"error":{"message":"bad key"}})"});
  EXPECT_FALSE(m.snapshot().has_value());
  EXPECT_NE(m.problem().find("refused the key"), std::string::npos) << m.problem();
  m.on_poll(HttpAnswer{200, "<html>"});
  EXPECT_NE(m.problem().find("not JSON"), std::string::npos) << m.problem();
}

}  // namespace
}  // namespace met::top
