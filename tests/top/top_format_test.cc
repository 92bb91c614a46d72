// The dashboard's fixed-width figures and sparklines.
#include "top/top_format.h"

#include <gtest/gtest.h>

#include <limits>

namespace met::top {
namespace {

TEST(FmtDuration, PicksAUnitThatFitsSixColumns) {
  const std::vector<std::pair<std::optional<int64_t>, std::string>> cases = {
      {std::nullopt, "-"}, {-5, "0ms"},        {0, "0ms"},          {850, "850ms"},       {12'345, "12.3s"},
      {245'000, "4m05s"},  {11'220'000, "3h07m"}, {400'000'000, "4d"}, {std::numeric_limits<int64_t>::max(), ""}};
  for (const auto& [ms, want] : cases) {
    const std::string got = fmt_duration(ms);
    if (!want.empty()) {
      EXPECT_EQ(got, want);
    }
    EXPECT_LE(got.size(), 6u) << got;
  }
}

TEST(FmtCount, StaysWithinSixColumns) {
  EXPECT_EQ(fmt_count(999'999), "999999");
  EXPECT_EQ(fmt_count(1'234'567), "1.23M");
  EXPECT_EQ(fmt_count(123'456'789), "123M");
  EXPECT_EQ(fmt_count(-1), "-");
  EXPECT_LE(fmt_count(std::numeric_limits<int64_t>::max()).size(), 6u);
}

TEST(FmtRateAndPercent, PrintAbsentAsADash) {
  EXPECT_EQ(fmt_rate(std::nullopt), "-");
  EXPECT_EQ(fmt_rate(12.34), "12.3");
  EXPECT_EQ(fmt_rate(1234.4), "1234");
  EXPECT_EQ(fmt_rate(123456.0), "123k");
  EXPECT_EQ(fmt_percent(std::nullopt), "-");
  EXPECT_EQ(fmt_percent(0.425), "42.5%");
}

TEST(Fit, PadsOrCutsToTheWidth) {
  EXPECT_EQ(fit("ab", 4), "ab  ");
  EXPECT_EQ(fit("abcdef", 4), "abcd");
  EXPECT_EQ(fit_right("ab", 4), "  ab");
}

TEST(Sparkline, ScalesTheNewestSamplesIntoLevelsRightAligned) {
  const std::deque<double> samples = {0, 1, 2, 4, 8};
  const std::function<double(const double&)> v = [](const double& d) { return d; };
  EXPECT_EQ(sparkline(samples, v, std::nullopt, 8), "   _.-+@");
  EXPECT_EQ(sparkline(samples, v, std::nullopt, 3), "-+@");
  EXPECT_EQ(sparkline(samples, v, 16.0, 5), "_..-+");
  EXPECT_EQ(sparkline(std::deque<double>{}, v, 1.0, 4), "    ");
  EXPECT_EQ(sparkline(std::deque<double>{0, 0}, v, std::nullopt, 2), "__") << "all zero draws the baseline";
}

}  // namespace
}  // namespace met::top
