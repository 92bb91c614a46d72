// TextChannel trims whitespace only where markup was cut out.
#include "chat/output/text_channel.h"

#include <gtest/gtest.h>

namespace met {
namespace {

TEST(TextChannel, WithoutTrimmingTextPassesUnchanged) {
  TextChannel channel(/*trims=*/false, /*starts_at_boundary=*/true);
  EXPECT_EQ(channel.take("  a \n"), "  a \n");
  EXPECT_EQ(channel.finish(false), "");
}

TEST(TextChannel, TrailingWhitespaceWaitsForWhatFollows) {
  TextChannel channel(/*trims=*/true, /*starts_at_boundary=*/false);
  EXPECT_EQ(channel.take("a \n"), "a");
  EXPECT_EQ(channel.take("b"), " \nb");
  EXPECT_EQ(channel.take("\n"), "");
  EXPECT_EQ(channel.finish(/*keep_trailing=*/true), "\n");
}

TEST(TextChannel, ABoundaryDropsHeldAndLeadingWhitespace) {
  TextChannel channel(/*trims=*/true, /*starts_at_boundary=*/false);
  EXPECT_EQ(channel.take(" lead\n\n"), " lead");
  channel.boundary();
  EXPECT_EQ(channel.take("\n "), "");
  EXPECT_EQ(channel.take(" next"), "next");
}

TEST(TextChannel, StartingAtABoundaryDropsLeadingWhitespace) {
  TextChannel channel(/*trims=*/true, /*starts_at_boundary=*/true);
  EXPECT_EQ(channel.take("\n  x"), "x");
}

}  // namespace
}  // namespace met
