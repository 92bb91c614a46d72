// Python str algorithms, checked against what CPython returns.
#include "chat/jinja/str_ops.h"

#include <gtest/gtest.h>

namespace met::jinja {
namespace {

using Parts = std::vector<std::string_view>;

TEST(StrOps, SplitOnWhitespaceOrASeparator) {
  EXPECT_EQ(py_split("  a b  c  ", std::nullopt, -1), (Parts{"a", "b", "c"}));
  EXPECT_EQ(py_split("  a b  c  ", std::nullopt, 1), (Parts{"a", "b  c  "}));
  EXPECT_EQ(py_split("", std::nullopt, -1), Parts{});
  EXPECT_EQ(py_split("", ",", -1), Parts{""});
  EXPECT_EQ(py_split("a,b,,c", ",", -1), (Parts{"a", "b", "", "c"}));
  EXPECT_EQ(py_split("a,b,c", ",", 1), (Parts{"a", "b,c"}));
  EXPECT_EQ(py_rsplit("a,b,c", ",", 1), (Parts{"a,b", "c"}));
  EXPECT_EQ(py_rsplit("  a b  c  ", std::nullopt, 1), (Parts{"  a b", "c"}));
}

TEST(StrOps, SplitlinesKnowsEveryLineBoundary) {
  EXPECT_EQ(py_splitlines("ab\r\ncd\nef\rg\x0bh", false), (Parts{"ab", "cd", "ef", "g", "h"}));
  EXPECT_EQ(py_splitlines("ab\r\ncd\n", true), (Parts{"ab\r\n", "cd\n"}));
  EXPECT_EQ(py_splitlines("a\xE2\x80\xA8" "b", false), (Parts{"a", "b"}));
}

TEST(StrOps, StripWhitespaceOrCharacters) {
  EXPECT_EQ(py_strip(" \t x \n", std::nullopt, StripSide::kBoth), "x");
  EXPECT_EQ(py_strip("xxyxx", "x", StripSide::kLeft), "yxx");
  EXPECT_EQ(py_strip("xxyxx", "x", StripSide::kRight), "xxy");
  EXPECT_EQ(py_strip("\xC3\xA9" "a\xC3\xA9", "\xC3\xA9", StripSide::kBoth), "a");
}

TEST(StrOps, ReplaceFindAndCount) {
  EXPECT_EQ(py_replace("aaa", "a", "b", 2), "bba");
  EXPECT_EQ(py_replace("x", "", "-", -1), "-x-");
  EXPECT_EQ(py_replace("abc", "", "-", 2), "-a-bc");
  EXPECT_EQ(replaced_size("aaa", "a", "bb", -1), 6u);
  EXPECT_EQ(py_find("h\xC3\xA9llo", "l", false), 2);
  EXPECT_EQ(py_find("abcabc", "c", true), 5);
  EXPECT_EQ(py_find("abc", "z", false), -1);
  EXPECT_EQ(py_count("abcabc", "b"), 2);
  EXPECT_EQ(py_count("abc", ""), 4);
}

TEST(StrOps, TitleAndCapitalize) {
  EXPECT_EQ(py_title("they're bill's friends"), "They'Re Bill'S Friends");
  EXPECT_EQ(jinja_title("they're bill-s (x"), "They're Bill-S (X");
  EXPECT_EQ(py_capitalize("hELLO World"), "Hello world");
  EXPECT_EQ(word_count("a b  c, d-e"), 5);
}

}  // namespace
}  // namespace met::jinja
