// Tests for src/tokenizer/unicode_data.h.
#include "tokenizer/unicode_data.h"

#include <gtest/gtest.h>

namespace met {
namespace {

TEST(UnicodeData, NfdDecomposesAccentedLetters) {
  EXPECT_EQ(normalize_nfd("\xC3\xA9"), "e\xCC\x81");        // é -> e + U+0301
  EXPECT_EQ(normalize_nfd("\xC3\x84pfel"), "A\xCC\x88pfel");  // Ä
  EXPECT_EQ(normalize_nfd(""), "");
}

TEST(UnicodeData, NfdFirstIsTheFirstCodePointOfTheFullDecomposition) {
  EXPECT_EQ(nfd_first(U'\u00E9'), U'e');       // é = e + U+0301
  EXPECT_EQ(nfd_first(U'\u01D7'), U'U');       // Ǘ = U + U+0308 + U+0301 (recursively)
  EXPECT_EQ(nfd_first(U'\uD55C'), U'\u1112');  // 한 = ᄒ ᅡ ᆫ (Hangul, algorithmic)
  EXPECT_EQ(nfd_first(U'\uFB01'), U'\uFB01');  // ﬁ: a compatibility decomposition only
  EXPECT_EQ(nfd_first(U'a'), U'a');
}

TEST(UnicodeData, NfkcFoldsCompatibilityCharacters) {
  EXPECT_EQ(normalize_nfkc("\xEF\xAC\x81"), "fi");  // ﬁ ligature
  EXPECT_EQ(normalize_nfkc("\xE2\x91\xA0"), "1");   // ①
  EXPECT_EQ(normalize_nfkc("e\xCC\x81"), "\xC3\xA9");
}

TEST(UnicodeData, LowercaseCoversNonAsciiLetters) {
  EXPECT_EQ(to_lower(U'A'), U'a');
  EXPECT_EQ(to_lower(0xC4), 0xE4u);    // Ä
  EXPECT_EQ(to_lower(0x411), 0x431u);  // Б
  EXPECT_EQ(to_lower(U'1'), U'1');
}

TEST(UnicodeData, GeneralCategoriesFollowUnicode) {
  EXPECT_TRUE(is_letter(0xDF));      // ß
  EXPECT_TRUE(is_letter(0x4E00));    // 一
  EXPECT_TRUE(is_number(0xBD));      // ½ (No)
  EXPECT_TRUE(is_punctuation(0xBF));  // ¿
  EXPECT_FALSE(is_punctuation(U'$'));  // Sc
  EXPECT_TRUE(is_ascii_punctuation(U'$'));
  EXPECT_TRUE(is_nonspacing_mark(0x301));
  EXPECT_TRUE(is_uppercase_letter(U'Q'));
  EXPECT_FALSE(is_uppercase_letter(U'q'));
  EXPECT_TRUE(is_other(0x200B));  // zero width space is Cf
  EXPECT_TRUE(is_other(0x07));
}

TEST(UnicodeData, WhiteSpaceIsTheUnicodeProperty) {
  for (char32_t cp : {U' ', U'\t', U'\n', char32_t{0x85}, char32_t{0xA0}, char32_t{0x3000},
                      char32_t{0x2029}}) {
    EXPECT_TRUE(is_white_space(cp)) << static_cast<uint32_t>(cp);
  }
  EXPECT_FALSE(is_white_space(0x200B));
  EXPECT_FALSE(is_white_space(0x180E));
}

TEST(UnicodeData, CjkIdeographsAreRecognized) {
  EXPECT_TRUE(is_cjk_ideograph(0x6211));  // 我
  EXPECT_FALSE(is_cjk_ideograph(0x3042));  // あ
}

}  // namespace
}  // namespace met
