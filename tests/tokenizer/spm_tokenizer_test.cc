// Tests for src/tokenizer/spm_tokenizer.h.
#include "tokenizer/spm_tokenizer.h"

#include <gtest/gtest.h>

#include "tokenizer/tokenizer_fixtures.h"

namespace met {
namespace {

std::vector<std::string> spm_pieces(const Vocab& vocab, std::string_view text, bool prefix = false) {
  SpmTokenizer spm(vocab);
  std::vector<TokenId> ids;
  spm.encode(text, prefix, ids);
  std::vector<std::string> texts;
  for (TokenId id : ids) texts.push_back(vocab.token(id).text);
  return texts;
}

using Texts = std::vector<std::string>;

TEST(SpmTokenizer, MergesTheBestScoringPairFirst) {
  EXPECT_EQ(spm_pieces(testing::tiny_vocab(testing::tiny_spm({"ab", "bc", "a", "b", "c"})), "abc"), (Texts{"ab", "c"}));
  EXPECT_EQ(spm_pieces(testing::tiny_vocab(testing::tiny_spm({"bc", "ab", "a", "b", "c"})), "abc"), (Texts{"a", "bc"}));
}

TEST(SpmTokenizer, EqualScoresMergeTheLeftmostPair) {
  EXPECT_EQ(spm_pieces(testing::tiny_vocab(testing::tiny_spm({"aa", "a"})), "aaa"), (Texts{"aa", "a"}));
}

TEST(SpmTokenizer, SpacesBecomeTheMetaSymbolWithAnOptionalPrefix) {
  const Vocab vocab = testing::tiny_vocab(testing::tiny_spm({"\xE2\x96\x81" "a", "\xE2\x96\x81", "a"}));
  EXPECT_EQ(spm_pieces(vocab, "a a", /*prefix=*/true), (Texts{"\xE2\x96\x81" "a", "\xE2\x96\x81" "a"}));
  EXPECT_EQ(spm_pieces(vocab, "a a", /*prefix=*/false), (Texts{"a", "\xE2\x96\x81" "a"}));
}

TEST(SpmTokenizer, CharacterOutsideTheVocabFallsBackToByteTokens) {
  EXPECT_EQ(spm_pieces(testing::tiny_vocab(testing::tiny_spm({"a"})), "a\xC3\xA9"), (Texts{"a", "<0xC3>", "<0xA9>"}));
}

TEST(SpmTokenizer, WithoutByteTokensAnUnknownCharacterBecomesUnk) {
  testing::TinyVocab v;
  v.tokens = {"<unk>", "<s>", "</s>", "a"};
  v.types = {2, 3, 3, 1};
  v.scores = {0, 0, 0, -1};
  EXPECT_EQ(spm_pieces(testing::tiny_vocab(v), "a\xC3\xA9" "a"), (Texts{"a", "<unk>", "a"}));
}

TEST(SpmTokenizer, UnusedTokenIsSplitBackIntoThePiecesThatFormedIt) {
  testing::TinyVocab v = testing::tiny_spm({"ab", "a", "b"});
  v.types[259] = 5;  // "ab" UNUSED
  EXPECT_EQ(spm_pieces(testing::tiny_vocab(v), "ab"), (Texts{"a", "b"}));
}

TEST(SpmTokenizer, ControlTokenTextIsNeverFormedByMerges) {
  testing::TinyVocab v = testing::tiny_spm({"<s", "<", "s", ">"});
  EXPECT_EQ(spm_pieces(testing::tiny_vocab(v), "<s>"), (Texts{"<s", ">"}));
}

// A vocab with merges (a converted tokenizer.json BPE) merges by their rank.
TEST(SpmTokenizer, WithMergesTheLowestRankedListedPairMergesFirstWhateverTheScores) {
  testing::TinyVocab v = testing::tiny_spm({"ab", "bc", "a", "b", "c"});  // scores favour "ab"
  v.merges = {"b c", "a b"};
  EXPECT_EQ(spm_pieces(testing::tiny_vocab(v), "abc"), (Texts{"a", "bc"}));
}

TEST(SpmTokenizer, WithMergesOnlyListedPairsMerge) {
  testing::TinyVocab v = testing::tiny_spm({"abc", "ab", "a", "b", "c"});  // "abc" is a token ...
  v.merges = {"a b"};                                                       // ... but no merge forms it
  EXPECT_EQ(spm_pieces(testing::tiny_vocab(v), "abc"), (Texts{"ab", "c"}));
  v.merges = {"a b", "ab c"};
  EXPECT_EQ(spm_pieces(testing::tiny_vocab(v), "abc"), (Texts{"abc"}));
}

TEST(SpmTokenizer, WithMergesARunOfUnknownCharactersIsOneUnk) {
  testing::TinyVocab v;
  v.tokens = {"<unk>", "<s>", "</s>", "a", "b", "ab"};
  v.types = {2, 3, 3, 1, 1, 1};
  v.scores = {0, 0, 0, 0, 0, -1};
  v.merges = {"a b"};
  EXPECT_EQ(spm_pieces(testing::tiny_vocab(v), "a\xC3\xA9\xC3\xB6" "ab\xC3\xA9"), (Texts{"a", "<unk>", "ab", "<unk>"}));
  v.merges.clear();  // without merges (SentencePiece): one <unk> per character, as before
  EXPECT_EQ(spm_pieces(testing::tiny_vocab(v), "a\xC3\xA9\xC3\xB6"), (Texts{"a", "<unk>", "<unk>"}));
}

TEST(SpmTokenizer, EmptyTextGivesNoTokensWithoutAPrefix) {
  EXPECT_TRUE(spm_pieces(testing::tiny_vocab(testing::tiny_spm({"a"})), "").empty());
}

}  // namespace
}  // namespace met
