// Tests for src/tokenizer/utf8.h.
#include "tokenizer/utf8.h"

#include <gtest/gtest.h>

namespace met {
namespace {

TEST(Utf8, DecodesOneToFourByteCharacters) {
  const std::string s = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x81";  // a é € 😁
  const char32_t expected[] = {U'a', 0xE9, 0x20AC, 0x1F601};
  size_t pos = 0;
  for (char32_t cp : expected) {
    const Utf8Char c = decode_utf8(s, pos);
    EXPECT_EQ(c.status, Utf8Status::kOk);
    EXPECT_EQ(c.code_point, cp);
    pos += c.length;
  }
  EXPECT_EQ(pos, s.size());
}

TEST(Utf8, RejectsOverlongSurrogateAndOutOfRangeForms) {
  for (const std::string bad : {"\xC0\x80", "\xE0\x80\x80", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xF5\x80"}) {
    EXPECT_EQ(decode_utf8(bad, 0).status, Utf8Status::kInvalid) << bad;
    EXPECT_FALSE(is_valid_utf8(bad));
  }
}

TEST(Utf8, TruncatedSequenceIsIncompleteNotInvalid) {
  const Utf8Char c = decode_utf8("\xF0\x9F\x98", 0);
  EXPECT_EQ(c.status, Utf8Status::kIncomplete);
  EXPECT_EQ(c.length, 3);
}

TEST(Utf8, SanitizeReplacesEachMaximalInvalidSubpartOnce) {
  EXPECT_EQ(sanitize_utf8("\xE2\x82" "A"), "\xEF\xBF\xBD" "A");
  EXPECT_EQ(sanitize_utf8("\x80\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(sanitize_utf8("ok\xF0\x9F\x98"), "ok\xEF\xBF\xBD");
  EXPECT_EQ(sanitize_utf8("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(Utf8, SanitizeLeavesValidTextUnchanged) {
  const std::string s = "Hello, \xD0\xBC\xD0\xB8\xD1\x80 \xF0\x9F\xA6\x99";
  EXPECT_TRUE(is_valid_utf8(s));
  EXPECT_EQ(sanitize_utf8(s), s);
}

TEST(Utf8, IncompleteTailCountsOnlyBytesThatCouldStillComplete) {
  EXPECT_EQ(utf8_incomplete_tail(""), 0u);
  EXPECT_EQ(utf8_incomplete_tail("abc"), 0u);
  EXPECT_EQ(utf8_incomplete_tail("a\xF0\x9F\x98"), 3u);
  EXPECT_EQ(utf8_incomplete_tail("a\xE2"), 1u);
  EXPECT_EQ(utf8_incomplete_tail("a\xE2\x82\xAC"), 0u);  // complete
  EXPECT_EQ(utf8_incomplete_tail("a\xE2" "b"), 0u);      // can never complete
  EXPECT_EQ(utf8_incomplete_tail("\x80"), 0u);           // a stray continuation byte
}

TEST(Utf8, AppendEncodesEveryLengthAndReplacesSurrogates) {
  std::string s;
  append_utf8(s, U'a');
  append_utf8(s, 0xE9);
  append_utf8(s, 0x20AC);
  append_utf8(s, 0x1F601);
  EXPECT_EQ(s, "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x81");
  std::string bad;
  append_utf8(bad, 0xD800);
  append_utf8(bad, 0x110000);
  EXPECT_EQ(bad, "\xEF\xBF\xBD\xEF\xBF\xBD");
}

}  // namespace
}  // namespace met
