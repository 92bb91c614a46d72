// Tests for src/tokenizer/ugm_tokenizer.h: cases checkable by hand from the
// algorithm's definition (the best total score, the unknown penalty, fused
// unknowns, byte fallback, USER_DEFINED tokens, whitespace, the charsmap).
// A real vocab's cases are in tests/hf/hf_tokenizer_vectors_test.cc.
#include "tokenizer/ugm_tokenizer.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "tokenizer/tokenizer_fixtures.h"

namespace met {
namespace {

using Texts = std::vector<std::string>;
constexpr std::string_view kMeta = "\xE2\x96\x81";  // "▁"

// "▁" written as "_" so expectations stay readable.
std::string readable(std::string text) {
  for (size_t at = text.find(kMeta); at != std::string::npos; at = text.find(kMeta, at + 1)) {
    text.replace(at, kMeta.size(), "_");
  }
  return text;
}

UgmTokenizer ugm_of(const Vocab& vocab) {
  Result<UgmTokenizer> ugm = UgmTokenizer::create(vocab);
  EXPECT_TRUE(ugm.ok()) << ugm.status().to_string();
  return std::move(ugm).value();
}

Texts ugm_pieces(const Vocab& vocab, std::string_view text) {
  std::vector<TokenId> ids;
  ugm_of(vocab).encode(text, ids);
  Texts texts;
  for (TokenId id : ids) texts.push_back(readable(vocab.token(id).text));
  return texts;
}

std::string normalized(const testing::TinyVocab& v, std::string_view text) {
  const Vocab vocab = testing::tiny_vocab(v);
  return readable(ugm_of(vocab).normalize(text));
}

testing::TinyVocab with_flags(testing::TinyVocab v, bool add_space_prefix, bool remove_extra_whitespaces) {
  v.extra[0].second = GgufValue(add_space_prefix);
  v.extra.emplace_back("tokenizer.ggml.remove_extra_whitespaces", GgufValue(remove_extra_whitespaces));
  return v;
}

TEST(UgmTokenizer, PicksTheSegmentationWithTheHighestTotalScore) {
  // ab+c = -2.5 beats a+b+c = -3 and a+bc = -4.
  EXPECT_EQ(ugm_pieces(testing::tiny_vocab(testing::tiny_ugm({{"a", -1}, {"b", -1}, {"c", -1}, {"ab", -1.5f},
                                                               {"bc", -3}})), "abc"),
            (Texts{"ab", "c"}));
  // a+bc = -2.2 beats ab+c = -2.5.
  EXPECT_EQ(ugm_pieces(testing::tiny_vocab(testing::tiny_ugm({{"a", -1}, {"b", -1}, {"c", -1}, {"ab", -1.5f},
                                                               {"bc", -1.2f}})), "abc"),
            (Texts{"a", "bc"}));
}

TEST(UgmTokenizer, ALongPieceWinsOnlyWhenItsScoreBeatsThePartsTogether) {
  const testing::TinyVocab v = testing::tiny_ugm({{"a", -1}, {"aaaa", -4.5f}, {"aa", -1.9f}});
  EXPECT_EQ(ugm_pieces(testing::tiny_vocab(v), "aaaa"), (Texts{"aa", "aa"}));  // -3.8 beats -4.5 and -4
}

TEST(UgmTokenizer, ACharacterNoPieceCoversBecomesTheUnknownToken) {
  const Vocab vocab = testing::tiny_vocab(testing::tiny_ugm({{"a", -1}}));
  EXPECT_EQ(ugm_pieces(vocab, "a?a"), (Texts{"a", "<unk>", "a"}));
  EXPECT_EQ(ugm_pieces(vocab, "a\xC3\xA9"), (Texts{"a", "<unk>"}));  // é is one unknown, not two bytes
}

TEST(UgmTokenizer, AdjacentUnknownCharactersFuseIntoOneUnknownToken) {
  const Vocab vocab = testing::tiny_vocab(testing::tiny_ugm({{"a", -1}}));
  EXPECT_EQ(ugm_pieces(vocab, "a??\xC3\xA9" "a?"), (Texts{"a", "<unk>", "a", "<unk>"}));
}

TEST(UgmTokenizer, TheUnknownTokenScoresTenBelowTheLowestPiece) {
  // The lowest piece is "xa" at -20, so <unk> scores -30 and <unk>+ab -31:
  // xa+b wins with b at -10.5 (-30.5) and loses with b at -11.5 (-31.5).
  EXPECT_EQ(ugm_pieces(testing::tiny_vocab(testing::tiny_ugm({{"xa", -20}, {"ab", -1}, {"b", -10.5f}})), "xab"),
            (Texts{"xa", "b"}));
  EXPECT_EQ(ugm_pieces(testing::tiny_vocab(testing::tiny_ugm({{"xa", -20}, {"ab", -1}, {"b", -11.5f}})), "xab"),
            (Texts{"<unk>", "ab"}));
}

TEST(UgmTokenizer, ControlAndUnknownTokenTextsAreNotPieces) {
  const Vocab vocab = testing::tiny_vocab(testing::tiny_ugm({{"<", -1}, {"/", -1}, {"s", -1}, {">", -1}}));
  EXPECT_EQ(ugm_pieces(vocab, "</s>"), (Texts{"<", "/", "s", ">"}));
}

TEST(UgmTokenizer, UserDefinedTokensScoreZeroWhateverTheirStoredScore) {
  testing::TinyVocab v = testing::tiny_ugm({{"a", -1}, {"b", -1}, {"ab", -100}});
  v.types[5] = 4;  // "ab" USER_DEFINED
  EXPECT_EQ(ugm_pieces(testing::tiny_vocab(v), "abab"), (Texts{"ab", "ab"}));
}

TEST(UgmTokenizer, UserDefinedTokensBypassTheCharsmap) {
  testing::TinyVocab v = testing::tiny_ugm({{"a", -1}, {"XA", -1}});
  v.types[4] = 4;  // "XA" USER_DEFINED
  v.extra.emplace_back("tokenizer.ggml.precompiled_charsmap", testing::charsmap_value(testing::tiny_charsmap(
                                                                  {{"A", "a"}, {"X", "x"}})));
  EXPECT_EQ(normalized(v, "XAXA A"), "XAXA_a");
}

TEST(UgmTokenizer, TheCharsmapRewritesTheTextBeforeSegmentation) {
  testing::TinyVocab v = testing::tiny_ugm({{"fi", -1}, {"A", -1}});
  v.extra.emplace_back("tokenizer.ggml.precompiled_charsmap",
                       testing::charsmap_value(testing::tiny_charsmap(
                           {{"\xEF\xAC\x81", "fi"}, {"\xEF\xBC\xA1", "A"}, {"\x01", ""}, {"\xE3\x80\x80", " "}})));
  EXPECT_EQ(normalized(v, "\xEF\xAC\x81\x01\xEF\xBC\xA1"), "fiA");  // ﬁ, a deleted control, full-width Ａ
  EXPECT_EQ(normalized(v, "A\xE3\x80\x80" "A"), "A_A");  // an ideographic space becomes a space, then "▁"
  EXPECT_EQ(ugm_pieces(testing::tiny_vocab(v), "\xEF\xAC\x81\xEF\xBC\xA1"), (Texts{"fi", "A"}));
}

TEST(UgmTokenizer, SpacesBecomeMetaSymbolsWithAnOptionalPrefix) {
  const testing::TinyVocab v = testing::tiny_ugm({{"a", -1}});
  EXPECT_EQ(normalized(with_flags(v, false, false), "a b"), "a_b");
  EXPECT_EQ(normalized(with_flags(v, true, false), "a b"), "_a_b");
  EXPECT_EQ(normalized(with_flags(v, true, false), " a  b "), "__a__b_");
}

TEST(UgmTokenizer, RemovingExtraWhitespaceTrimsAndCollapsesRuns) {
  const testing::TinyVocab v = testing::tiny_ugm({{"a", -1}});
  EXPECT_EQ(normalized(with_flags(v, true, true), "  a   b  "), "_a_b");
  // As llama.cpp: the first word gets its "▁" even without add_space_prefix.
  EXPECT_EQ(normalized(with_flags(v, false, true), "a b"), "_a_b");
  EXPECT_EQ(normalized(with_flags(v, true, true), "   "), "");
}

TEST(UgmTokenizer, WithByteTokensAnUnknownRunBecomesItsBytes) {
  testing::TinyVocab v = testing::tiny_ugm({{"a", -1}});
  for (int b = 0; b < 256; ++b) {
    v.tokens.push_back(fmt::format("<0x{:02X}>", b));
    v.types.push_back(6);
    v.scores.push_back(0);
  }
  EXPECT_EQ(ugm_pieces(testing::tiny_vocab(v), "a\xC3\xA9?a"), (Texts{"a", "<0xC3>", "<0xA9>", "<0x3F>", "a"}));
}

TEST(UgmTokenizer, WithoutAnUnknownOrByteTokenAnUnknownRunIsDropped) {
  testing::TinyVocab v = testing::tiny_ugm({{"a", -1}});
  v.types[2] = 3;  // <unk> CONTROL
  v.extra.emplace_back("tokenizer.ggml.unknown_token_id", GgufValue(int32_t{-1}));
  EXPECT_EQ(ugm_pieces(testing::tiny_vocab(v), "a?a"), (Texts{"a", "a"}));
}

TEST(UgmTokenizer, EmptyOrAllSpaceTextGivesNoTokens) {
  const Vocab vocab = testing::tiny_vocab(with_flags(testing::tiny_ugm({{"a", -1}}), true, true));
  EXPECT_TRUE(ugm_pieces(vocab, "").empty());
  EXPECT_EQ(ugm_pieces(vocab, " \xE3\x80\x80 "), (Texts{"<unk>"}));  // U+3000 is no space without a charsmap rule
  EXPECT_TRUE(ugm_pieces(vocab, "   ").empty());
}

TEST(UgmTokenizer, AMalformedCharsmapIsAnError) {
  testing::TinyVocab v = testing::tiny_ugm({{"a", -1}});
  v.extra.emplace_back("tokenizer.ggml.precompiled_charsmap", testing::charsmap_value({0xFF, 0, 0, 0, 'x', 0}));
  const Vocab vocab = testing::tiny_vocab(v);
  EXPECT_FALSE(UgmTokenizer::create(vocab).ok());
}

}  // namespace
}  // namespace met
