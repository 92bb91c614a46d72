// Tests for src/tokenizer/precompiled_charsmap.h, over charsmaps built by
// tests/tokenizer/tokenizer_fixtures.h's tiny_charsmap.
#include "tokenizer/precompiled_charsmap.h"

#include <gtest/gtest.h>

#include "tokenizer/tokenizer_fixtures.h"

namespace met {
namespace {

PrecompiledCharsmap charsmap_of(const std::vector<std::pair<std::string, std::string>>& rules) {
  Result<PrecompiledCharsmap> charsmap = PrecompiledCharsmap::parse(testing::tiny_charsmap(rules));
  EXPECT_TRUE(charsmap.ok()) << charsmap.status().to_string();
  return std::move(charsmap).value();
}

TEST(PrecompiledCharsmap, TheLongestMatchingRuleWins) {
  const PrecompiledCharsmap charsmap = charsmap_of({{"A", "a"}, {"AB", "x"}, {"ABCD", "y"}});
  const std::optional<CharsmapMatch> two = charsmap.longest_match("ABC");
  ASSERT_TRUE(two.has_value());
  EXPECT_EQ(two->consumed_bytes, 2u);
  EXPECT_EQ(two->replacement, "x");
  const std::optional<CharsmapMatch> one = charsmap.longest_match("AC");
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->consumed_bytes, 1u);
  EXPECT_EQ(one->replacement, "a");
  EXPECT_EQ(charsmap.longest_match("ABCD")->replacement, "y");
}

TEST(PrecompiledCharsmap, TextNoRuleStartsWithHasNoMatch) {
  const PrecompiledCharsmap charsmap = charsmap_of({{"A", "a"}});
  EXPECT_FALSE(charsmap.longest_match("BA").has_value());
  EXPECT_FALSE(charsmap.longest_match("").has_value());
}

TEST(PrecompiledCharsmap, MultiByteCharactersMapToStrings) {
  const PrecompiledCharsmap charsmap = charsmap_of({{"\xEF\xAC\x81", "fi"}, {"\xEF\xBC\xA1", "A"}});  // ﬁ, Ａ
  EXPECT_EQ(charsmap.longest_match("\xEF\xAC\x81ne")->replacement, "fi");
  EXPECT_EQ(charsmap.longest_match("\xEF\xAC\x81ne")->consumed_bytes, 3u);
  EXPECT_EQ(charsmap.longest_match("\xEF\xBC\xA1")->replacement, "A");
}

TEST(PrecompiledCharsmap, AnEmptyReplacementDeletesTheInput) {
  const PrecompiledCharsmap charsmap = charsmap_of({{"\x01", ""}});
  const std::optional<CharsmapMatch> match = charsmap.longest_match("\x01x");
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->consumed_bytes, 1u);
  EXPECT_EQ(match->replacement, "");
}

TEST(PrecompiledCharsmap, MatchingStopsAtANulByte) {
  const PrecompiledCharsmap charsmap = charsmap_of({{"A", "a"}, {"AB", "x"}});
  EXPECT_EQ(charsmap.longest_match(std::string_view("A\0B", 3))->consumed_bytes, 1u);
}

TEST(PrecompiledCharsmap, AnEmptyBlobMatchesNothing) {
  Result<PrecompiledCharsmap> charsmap = PrecompiledCharsmap::parse({});
  ASSERT_TRUE(charsmap.ok());
  EXPECT_TRUE(charsmap->empty());
  EXPECT_FALSE(charsmap->longest_match("A").has_value());
}

TEST(PrecompiledCharsmap, ABlobWhoseTrieDoesNotFitIsRejected) {
  std::vector<uint8_t> blob = testing::tiny_charsmap({{"A", "a"}});
  blob[0] = 0xF0;  // the trie's size now runs past the blob
  EXPECT_FALSE(PrecompiledCharsmap::parse(blob).ok());
  const std::vector<uint8_t> header_only = {4, 0, 0};
  EXPECT_FALSE(PrecompiledCharsmap::parse(header_only).ok());
  const std::vector<uint8_t> no_strings = {4, 0, 0, 0, 0, 0, 0, 0};  // llama.cpp wants strings after the trie
  EXPECT_FALSE(PrecompiledCharsmap::parse(no_strings).ok());
}

TEST(PrecompiledCharsmap, AUnitPointingOutsideTheTrieIsNoMatch) {
  std::vector<uint8_t> blob = testing::tiny_charsmap({{"A", "a"}});
  blob[7] = 0x7F;  // the root's base far past the trie
  Result<PrecompiledCharsmap> charsmap = PrecompiledCharsmap::parse(blob);
  ASSERT_TRUE(charsmap.ok());
  EXPECT_FALSE(charsmap->longest_match("A").has_value());
}

}  // namespace
}  // namespace met
