// UTF-8 helpers: decoding (invalid bytes never overread), lengths in code
// points, character classes and case mapping.
#include "chat/jinja/utf8.h"

#include <gtest/gtest.h>

namespace met::jinja {
namespace {

TEST(Utf8, DecodesEachSequenceLength) {
  const std::string s = "a\xC3\xA9\xE6\x97\xA5\xF0\x9F\x99\x82";  // a é 日 🙂
  size_t pos = 0;
  EXPECT_EQ(decode_utf8(s, pos), U'a');
  EXPECT_EQ(decode_utf8(s, pos), U'\u00E9');
  EXPECT_EQ(decode_utf8(s, pos), U'\u65E5');
  EXPECT_EQ(decode_utf8(s, pos), U'\U0001F642');
  EXPECT_EQ(pos, s.size());
  EXPECT_EQ(utf8_length(s), 4u);
  EXPECT_EQ(utf8_offsets(s), (std::vector<size_t>{0, 1, 3, 6, 10}));
}

TEST(Utf8, InvalidBytesDecodeAsOneReplacementEach) {
  for (const std::string& bad : {std::string("\xFF"), std::string("\xC3"), std::string("\xE6\x97"),
                                 std::string("\xC0\x80"), std::string("\xED\xA0\x80")}) {
    size_t pos = 0;
    EXPECT_EQ(decode_utf8(bad, pos), U'\uFFFD');
    EXPECT_EQ(pos, 1u);
  }
}

TEST(Utf8, EncodesWhatItDecodes) {
  std::string out;
  for (char32_t c : {U'a', U'\u00E9', U'\u65E5', U'\U0001F642'}) append_utf8(out, c);
  EXPECT_EQ(out, "a\xC3\xA9\xE6\x97\xA5\xF0\x9F\x99\x82");
}

TEST(Utf8, CaseMappingCoversEuropeanScripts) {
  EXPECT_EQ(to_upper("r\xC3\xA9ponds \xC3\xA0 fran\xC3\xA7" "ais"), "R\xC3\x89PONDS \xC3\x80 FRAN\xC3\x87" "AIS");
  EXPECT_EQ(to_upper("stra\xC3\x9F" "e"), "STRASSE");
  EXPECT_EQ(to_lower("\xCE\x91\xCE\x92\xCE\x93"), "\xCE\xB1\xCE\xB2\xCE\xB3");         // ΑΒΓ
  EXPECT_EQ(to_upper("\xD0\xBF\xD1\x80\xD0\xB8"), "\xD0\x9F\xD0\xA0\xD0\x98");         // при
  EXPECT_EQ(to_upper("\xE6\x97\xA5"), "\xE6\x97\xA5");                                  // caseless
}

TEST(Utf8, CharacterClasses) {
  EXPECT_TRUE(is_space(U' '));
  EXPECT_TRUE(is_space(U'\u3000'));
  EXPECT_FALSE(is_space(U'x'));
  EXPECT_TRUE(is_word_char(U'_'));
  EXPECT_TRUE(is_word_char(U'\u65E5'));
  EXPECT_FALSE(is_word_char(U'-'));
  EXPECT_FALSE(is_word_char(U'\U0001F642'));
  EXPECT_TRUE(is_cased(U'a'));
  EXPECT_FALSE(is_cased(U'1'));
}

}  // namespace
}  // namespace met::jinja
