// handle_key over the canned table: selection, views, sort, filters, pause,
// and the cancel that asks first.
#include "top/top_keys.h"

#include <gtest/gtest.h>

#include "top_test_data.h"

namespace met::top {
namespace {

class TopKeys : public ::testing::Test {
 protected:
  void SetUp() override {
    snapshot_ = parse_snapshot(testing::kRequestsJson).value();
    refresh();
  }
  void refresh() {
    rows_ = visible_rows(snapshot_, ui_.filter, ui_.order);
    settle_selection(ui_, rows_);
  }
  KeyEffect press(int key) {
    const KeyEffect e = handle_key(ui_, key, rows_, tenants_);
    refresh();
    return e;
  }
  Snapshot snapshot_;
  UiState ui_;
  std::vector<const RequestRow*> rows_;
  std::vector<std::string> tenants_ = {"acme", "beta"};
};

TEST_F(TopKeys, TheFirstRowIsSelectedAndArrowsMoveWithinTheTable) {
  ui_.order = {SortColumn::kId, false};
  refresh();
  EXPECT_EQ(ui_.selected_id, "9");
  press(kKeyDown);
  EXPECT_EQ(ui_.selected_id, "17");
  press('j');
  press(kKeyDown);
  EXPECT_EQ(ui_.selected_id, "18") << "stops at the last row";
  press(kKeyPageUp);
  EXPECT_EQ(ui_.selected_id, "9");
}

TEST_F(TopKeys, TheSelectionFollowsItsRequestWhenTheOrderChanges) {
  press(kKeyDown);
  const std::string chosen = ui_.selected_id.value();
  press('r');
  EXPECT_EQ(ui_.selected_id, chosen);
}

TEST_F(TopKeys, SortCyclesColumnsAndReverses) {
  ui_.order = {SortColumn::kId, true};
  press('s');
  EXPECT_EQ(ui_.order.column, SortColumn::kTenant);
  EXPECT_EQ(ui_.flash, "sort: tenant");
  press('r');
  EXPECT_FALSE(ui_.order.descending);
}

TEST_F(TopKeys, FiltersCycleThroughTenantsAndStatesAndBackToAll) {
  press('t');
  EXPECT_EQ(ui_.filter.tenant, "acme");
  EXPECT_EQ(rows_.size(), 1u);
  EXPECT_EQ(ui_.selected_id, "17");
  press('t');
  EXPECT_EQ(ui_.filter.tenant, "beta");
  press('t');
  EXPECT_FALSE(ui_.filter.tenant.has_value());
  press('f');
  EXPECT_EQ(ui_.filter.state, "waiting");
  EXPECT_EQ(ui_.flash, "filter: tenant all, state waiting");
  for (int i = 0; i < 7; ++i) press('f');
  EXPECT_FALSE(ui_.filter.state.has_value());
}

TEST_F(TopKeys, EnterOpensTheTimelineAndEnterOrEscapeCloseIt) {
  press(kKeyEnter);
  EXPECT_EQ(ui_.view, View::kTimeline);
  press(kKeyEnter);
  EXPECT_EQ(ui_.view, View::kTable);
  press(kKeyEnter);
  press(kKeyEscape);
  EXPECT_EQ(ui_.view, View::kTable);
}

TEST_F(TopKeys, ATimelineWhoseRequestLeavesReturnsToTheTable) {
  press(kKeyEnter);
  const std::string chosen = ui_.selected_id.value();
  std::erase_if(snapshot_.requests, [&](const RequestRow& r) { return r.id == chosen; });
  refresh();
  EXPECT_EQ(ui_.view, View::kTable);
  EXPECT_NE(ui_.flash.find("no longer listed"), std::string::npos);
}

TEST_F(TopKeys, CancelAsksFirstAndOnlyYSendsIt) {
  EXPECT_EQ(press('c'), KeyEffect::kNone);
  EXPECT_EQ(ui_.view, View::kConfirmCancel);
  EXPECT_EQ(press('n'), KeyEffect::kNone);
  EXPECT_EQ(ui_.view, View::kTable);
  EXPECT_EQ(ui_.flash, "cancel: not sent");
  press('c');
  EXPECT_EQ(press('y'), KeyEffect::kCancelSelected);
  EXPECT_EQ(ui_.view, View::kTable);
}

TEST_F(TopKeys, CancelWithNothingSelectedSaysSo) {
  snapshot_.requests.clear();
  refresh();
  EXPECT_EQ(press('c'), KeyEffect::kNone);
  EXPECT_EQ(ui_.view, View::kTable);
  EXPECT_EQ(ui_.flash, "cancel: no request selected");
}

TEST_F(TopKeys, PauseHelpAndQuit) {
  press('p');
  EXPECT_TRUE(ui_.paused);
  press('p');
  EXPECT_FALSE(ui_.paused);
  press('?');
  EXPECT_EQ(ui_.view, View::kHelp);
  press('?');
  EXPECT_EQ(ui_.view, View::kTable);
  EXPECT_EQ(press('q'), KeyEffect::kQuit);
}

}  // namespace
}  // namespace met::top
