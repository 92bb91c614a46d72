// find_marker tells complete markers from ones the text's end cuts off.
#include "chat/output/marker_match.h"

#include <gtest/gtest.h>

namespace met {
namespace {

const std::string kMarkers[] = {"<think>", ">>>", ">>>all\n", ""};

TEST(MarkerMatch, FindsTheEarliestCompleteMarker) {
  const auto match = find_marker("ab<think>c>>>", kMarkers);
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->pos, 2u);
  EXPECT_EQ(match->marker, 0u);
  EXPECT_FALSE(match->partial);
}

TEST(MarkerMatch, ATailThatMayStartAMarkerIsPartial) {
  const auto match = find_marker("text <thi", kMarkers);
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->pos, 5u);
  EXPECT_TRUE(match->partial);
}

TEST(MarkerMatch, ALongerMarkerThatMayStillCompleteWins) {
  const auto waiting = find_marker(">>>al", kMarkers);
  ASSERT_TRUE(waiting.has_value());
  EXPECT_TRUE(waiting->partial);
  const auto longest = find_marker(">>>all\nhi", kMarkers);
  ASSERT_TRUE(longest.has_value());
  EXPECT_EQ(longest->marker, 2u);
  const auto shorter = find_marker(">>>get", kMarkers);
  ASSERT_TRUE(shorter.has_value());
  EXPECT_EQ(shorter->marker, 1u);
  EXPECT_FALSE(shorter->partial);
}

TEST(MarkerMatch, NoMarkerNoMatchAndEmptyMarkersNeverMatch) {
  EXPECT_FALSE(find_marker("plain text", kMarkers).has_value());
  EXPECT_FALSE(find_marker("", kMarkers).has_value());
}

}  // namespace
}  // namespace met
