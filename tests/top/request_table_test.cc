// The request table's figures, filter and sort, on the canned snapshot.
#include "top/request_table.h"

#include <gtest/gtest.h>

#include "top_test_data.h"

namespace met::top {
namespace {

Snapshot canned() { return parse_snapshot(testing::kRequestsJson).value(); }

std::vector<std::string> ids(const std::vector<const RequestRow*>& rows) {
  std::vector<std::string> out;
  for (const RequestRow* r : rows) out.push_back(r->id);
  return out;
}

TEST(RequestFigures, TokensPerSecondRunFromTheFirstTokenToNowOrTheFinish) {
  const Snapshot s = canned();
  // 33 tokens over 4467 ms; 100 tokens over exactly 2 s.
  EXPECT_NEAR(tokens_per_s(s.requests[0], s.now_ms).value_or(-1), 33 * 1000.0 / 4467, 1e-9);
  EXPECT_FALSE(tokens_per_s(s.requests[1], s.now_ms).has_value());
  EXPECT_DOUBLE_EQ(tokens_per_s(s.requests[2], s.now_ms).value_or(-1), 50.0);
}

TEST(RequestFigures, TtftAndAgeCountFromQueued) {
  const Snapshot s = canned();
  EXPECT_EQ(ttft_ms(s.requests[0]), 100);
  EXPECT_FALSE(ttft_ms(s.requests[1]).has_value());
  EXPECT_EQ(age_ms(s.requests[1], s.now_ms), 567);
  RequestRow unknown;
  EXPECT_FALSE(age_ms(unknown, s.now_ms).has_value());
}

struct OrderCase {
  SortColumn column;
  bool descending;
  std::vector<std::string> ids;
};

TEST(VisibleRows, SortsByEachColumnEitherWay) {
  const Snapshot s = canned();
  const std::vector<OrderCase> cases = {
      {SortColumn::kId, false, {"9", "17", "18"}},  // numerically
      {SortColumn::kId, true, {"18", "17", "9"}},
      {SortColumn::kTenant, false, {"18", "17", "9"}},  // "" < acme < beta
      {SortColumn::kState, false, {"9", "17", "18"}},
      {SortColumn::kPrompt, true, {"9", "17", "18"}},
      {SortColumn::kCached, false, {"18", "17", "9"}},
      {SortColumn::kOutput, true, {"9", "17", "18"}},
      {SortColumn::kTokensPerS, true, {"9", "17", "18"}},
      {SortColumn::kTtft, false, {"18", "9", "17"}},  // unknown first
      {SortColumn::kAge, true, {"9", "17", "18"}},
      {SortColumn::kPreemptions, true, {"17", "18", "9"}},  // ties by id, reversed
  };
  for (const OrderCase& c : cases) {
    EXPECT_EQ(ids(visible_rows(s, {}, {c.column, c.descending})), c.ids)
        << column_name(c.column) << (c.descending ? " descending" : " ascending");
  }
}

TEST(VisibleRows, FiltersByTenantAndState) {
  const Snapshot s = canned();
  TableFilter by_tenant;
  by_tenant.tenant = "acme";
  EXPECT_EQ(ids(visible_rows(s, by_tenant, {})), std::vector<std::string>{"17"});
  TableFilter no_tenant;
  no_tenant.tenant = "";
  EXPECT_EQ(ids(visible_rows(s, no_tenant, {})), std::vector<std::string>{"18"});
  TableFilter by_state;
  by_state.state = "finished";
  EXPECT_EQ(ids(visible_rows(s, by_state, {})), std::vector<std::string>{"9"});
  by_state.tenant = "acme";
  EXPECT_TRUE(visible_rows(s, by_state, {}).empty());
}

TEST(SortColumns, CycleThroughEveryColumnBackToTheFirst) {
  SortColumn c = SortColumn::kId;
  int steps = 0;
  do {
    EXPECT_FALSE(column_name(c).empty());
    c = next_column(c);
    ++steps;
  } while (c != SortColumn::kId && steps < 100);
  EXPECT_EQ(steps, 10);
}

}  // namespace
}  // namespace met::top
