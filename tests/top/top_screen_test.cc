// layout_screen at 80x24 and other sizes, without a terminal: every pane of
// the canned snapshot, the timeline, the help, the cancel prompt, the
// unreachable-server message, and exact sizes for any terminal.
#include "top/top_screen.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "top_test_data.h"

namespace met::top {
namespace {

class TopScreen : public ::testing::Test {
 protected:
  void poll_canned() {
    model_.on_poll(HttpAnswer{200, testing::kRequestsJson});
    nlohmann::json j = nlohmann::json::parse(testing::kRequestsJson);
    j["now_ms"] = j["now_ms"].get<int64_t>() + 2000;
    j["engine"]["output_tokens"] = j["engine"]["output_tokens"].get<int64_t>() + 400;
    j["engine"]["device_busy_ms"] = j["engine"]["device_busy_ms"].get<double>() + 1000;
    model_.on_poll(HttpAnswer{200, j.dump()});
  }
  Grid layout(int width = 80, int height = 24) {
    static const Snapshot kEmpty;
    rows_ = visible_rows(model_.snapshot() ? *model_.snapshot() : kEmpty, ui_.filter, ui_.order);
    settle_selection(ui_, rows_);
    return layout_screen({"http://127.0.0.1:8080", 1.0, &model_, &ui_, &rows_}, width, height);
  }
  static std::string text(const Grid& g) {
    std::string s;
    for (const std::string& line : g.lines) s += line + "\n";
    return s;
  }
  static int line_of(const Grid& g, const std::string& needle) {
    for (size_t i = 0; i < g.lines.size(); ++i) {
      if (g.lines[i].find(needle) != std::string::npos) return static_cast<int>(i);
    }
    return -1;
  }

  TopModel model_{100, true};
  UiState ui_;
  std::vector<const RequestRow*> rows_;
};

TEST_F(TopScreen, At80x24EveryPaneIsShown) {
  poll_canned();
  const Grid g = layout();
  ASSERT_EQ(g.lines.size(), 24u);
  for (const std::string& line : g.lines) EXPECT_EQ(line.size(), 80u) << line;
  const std::string s = text(g);
  EXPECT_NE(s.find("met top  http://127.0.0.1:8080  up 1m39s"), std::string::npos) << s;
  EXPECT_NE(s.find("running          1"), std::string::npos) << s;
  EXPECT_NE(s.find("kv used       5.9%"), std::string::npos) << s;
  EXPECT_NE(s.find("busy         50.0%"), std::string::npos) << s;
  EXPECT_NE(s.find("tok/s out      200"), std::string::npos) << s;
  EXPECT_NE(s.find("ID       TENANT     STATE"), std::string::npos) << s;
  EXPECT_NE(s.find("AGEv"), std::string::npos) << "the sort column is marked\n" << s;
  EXPECT_NE(s.find("17       acme       running      120     64     33"), std::string::npos) << s;
  EXPECT_NE(s.find("18       -          waiting"), std::string::npos) << s;
  EXPECT_NE(s.find("TENANT            REQS"), std::string::npos) << s;
  EXPECT_NE(s.find("beta"), std::string::npos) << s;
  EXPECT_NE(g.lines.back().find("q quit"), std::string::npos);
  EXPECT_EQ(g.styles[static_cast<size_t>(line_of(g, "9        beta"))], LineStyle::kSelected) << s;
}

TEST_F(TopScreen, TheTimelineListsEachEventFromQueued) {
  poll_canned();
  ui_.selected_id = "17";
  ui_.view = View::kTimeline;
  const Grid g = layout();
  const std::string s = text(g);
  EXPECT_NE(s.find("request 17  tenant acme"), std::string::npos) << s;
  EXPECT_LT(line_of(g, "+0ms      queued"), line_of(g, "+10ms     admitted     cached_tokens 64")) << s;
  EXPECT_LT(line_of(g, "+100ms    first_token"), line_of(g, "+1.0s     preempted    swap")) << s;
  EXPECT_NE(line_of(g, "+2.0s     resumed"), -1) << s;
}

TEST_F(TopScreen, HelpAndTheCancelPromptAreShown) {
  poll_canned();
  ui_.view = View::kHelp;
  EXPECT_NE(text(layout()).find("cancel the selected request"), std::string::npos);
  ui_.view = View::kConfirmCancel;
  ui_.selected_id = "17";
  EXPECT_NE(layout().lines.back().find("cancel request 17? y cancels it"), std::string::npos);
}

TEST_F(TopScreen, AnUnreachableServerIsAClearMessage) {
  model_.on_poll(Result<HttpAnswer>(io_error("cannot reach http://127.0.0.1:9/v1/requests: Connection refused")));
  const Grid g = layout();
  const std::string s = text(g);
  EXPECT_NE(s.find("cannot reach http://127.0.0.1:9/v1/requests: Connection refused"), std::string::npos) << s;
  EXPECT_NE(s.find("retrying every 1s"), std::string::npos) << s;
  EXPECT_EQ(g.styles[static_cast<size_t>(line_of(g, "cannot reach"))], LineStyle::kAlert);
}

TEST_F(TopScreen, AFailureAfterAGoodPollKeepsTheTableAndMarksItStale) {
  poll_canned();
  model_.on_poll(HttpAnswer{401, ""});
  const std::string s = text(layout());
  EXPECT_NE(s.find("stale: the server refused the key"), std::string::npos) << s;
  EXPECT_NE(s.find("17       acme"), std::string::npos) << s;
}

TEST_F(TopScreen, ATimelineLongerThanTheScreenIsCutNotOverflowed) {
  nlohmann::json j = nlohmann::json::parse(testing::kRequestsJson);
  for (int i = 0; i < 60; ++i) j["requests"][0]["timeline"].push_back({{"event", "preempted"}, {"ms", 1764851233000}});
  model_.on_poll(HttpAnswer{200, j.dump()});
  ui_.selected_id = "17";
  ui_.view = View::kTimeline;
  const Grid g = layout();
  ASSERT_EQ(g.lines.size(), 24u);
  EXPECT_NE(g.lines.back().find("q quit"), std::string::npos);
  EXPECT_NE(text(g).find("TENANT            REQS"), std::string::npos);
}

TEST_F(TopScreen, AnySizeGivesExactlyThatGrid) {
  poll_canned();
  for (const auto& [w, h] : std::vector<std::pair<int, int>>{{80, 24}, {200, 60}, {40, 12}, {39, 24}, {10, 3},
                                                             {1, 1}, {0, 0}, {120, 13}}) {
    const Grid g = layout(w, h);
    ASSERT_EQ(g.lines.size(), static_cast<size_t>(std::max(h, 1))) << w << "x" << h;
    ASSERT_EQ(g.styles.size(), g.lines.size());
    for (const std::string& line : g.lines) EXPECT_EQ(line.size(), static_cast<size_t>(std::max(w, 1)));
  }
  EXPECT_NE(text(layout(30, 10)).find("met top needs a terminal"), std::string::npos);
}

}  // namespace
}  // namespace met::top
