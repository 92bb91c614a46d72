// Tests for src/tokenizer/pcre2_regex.h.
#include "tokenizer/pcre2_regex.h"

#include <gtest/gtest.h>

namespace met {
namespace {

Pcre2Regex compiled(std::string_view pattern) {
  auto regex = Pcre2Regex::compile(pattern);
  EXPECT_TRUE(regex.ok()) << regex.status().to_string();
  return std::move(regex).value();
}

TEST(Pcre2Regex, FindsTheFirstMatchAtOrAfterStart) {
  const Pcre2Regex regex = compiled("[0-9]+");
  RegexScratch scratch;
  auto m = regex.find("ab 12 cd 345", 0, scratch);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->begin, 3u);
  EXPECT_EQ(m->end, 5u);
  m = regex.find("ab 12 cd 345", 5, scratch);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->begin, 9u);
  EXPECT_FALSE(regex.find("no digits", 0, scratch).has_value());
}

TEST(Pcre2Regex, UnicodePropertiesMatchBeyondAscii) {
  const Pcre2Regex letters = compiled(R"(\p{L}+)");
  RegexScratch scratch;
  const std::string word = "\xC3\x84pfel";  // Äpfel
  auto m = letters.find(word, 0, scratch);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->end - m->begin, word.size());
  const Pcre2Regex space = compiled(R"(\s)");
  EXPECT_TRUE(space.find("\xE3\x80\x80", 0, scratch).has_value());  // U+3000 ideographic space
}

TEST(Pcre2Regex, SyntaxErrorIsAnInvalidArgumentNamingThePattern) {
  auto regex = Pcre2Regex::compile("(unclosed");
  ASSERT_FALSE(regex.ok());
  EXPECT_EQ(regex.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(regex.status().message().find("(unclosed"), std::string::npos);
}

TEST(Pcre2Regex, EndAnchorSeesOnlyTheEndOfTheSubject) {
  const Pcre2Regex regex = compiled(R"(\s+\z)");
  RegexScratch scratch;
  EXPECT_FALSE(regex.find("a  \nb", 0, scratch).has_value());
  auto m = regex.find("a \n", 0, scratch);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->begin, 1u);
}

TEST(Pcre2Regex, MovedRegexStillMatches) {
  Pcre2Regex a = compiled("x");
  Pcre2Regex b = std::move(a);
  RegexScratch scratch;
  EXPECT_TRUE(b.find("yx", 0, scratch).has_value());
  EXPECT_EQ(b.pattern(), "x");
}

}  // namespace
}  // namespace met
