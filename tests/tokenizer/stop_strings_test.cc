// Tests for src/tokenizer/stop_strings.h.
#include "tokenizer/stop_strings.h"

#include <gtest/gtest.h>

namespace met {
namespace {

TEST(StopStrings, FindsTheEarliestStop) {
  const std::string stops[] = {"world", "lo"};
  const auto hit = find_stop("hello world", stops);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->position, 3u);
  EXPECT_EQ(hit->stop_index, 1u);
}

TEST(StopStrings, TieGoesToTheStopListedFirst) {
  const std::string stops[] = {"ab", "abc"};
  const auto hit = find_stop("xabc", stops);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->stop_index, 0u);
}

TEST(StopStrings, EmptyStopStringsAreIgnored) {
  const std::string stops[] = {""};
  EXPECT_FALSE(find_stop("anything", stops).has_value());
  EXPECT_EQ(stop_prefix_suffix_length("anything", stops), 0u);
}

TEST(StopStrings, HoldsBackTheLongestSuffixThatBeginsAStop) {
  struct Case {
    std::string text;
    size_t expected;
  };
  const std::string stops[] = {"</answer>", "\n\n"};
  for (const Case& c : {Case{"done", 0}, Case{"done<", 1}, Case{"done</ans", 5}, Case{"a\n", 1},
                        Case{"</answer", 8}, Case{"<</", 2}, Case{"", 0}}) {
    EXPECT_EQ(stop_prefix_suffix_length(c.text, stops), c.expected) << c.text;
  }
}

}  // namespace
}  // namespace met
