// Tests for src/tokenizer/bpe_tokenizer.h.
#include "tokenizer/bpe_tokenizer.h"

#include <gtest/gtest.h>

#include "testing/shared_data.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/tokenizer_fixtures.h"

namespace met {
namespace {

std::vector<std::string> bpe_pieces(const Vocab& vocab, std::string_view text) {
  auto bpe = BpeTokenizer::create(vocab);
  EXPECT_TRUE(bpe.ok()) << bpe.status().to_string();
  std::vector<TokenId> ids;
  bpe->encode(text, ids);
  std::vector<std::string> texts;
  for (TokenId id : ids) texts.push_back(from_byte_level(vocab.token(id).text));
  return texts;
}

using Texts = std::vector<std::string>;

TEST(BpeTokenizer, MergesTheLowestRankFirst) {
  EXPECT_EQ(bpe_pieces(testing::tiny_vocab(testing::tiny_bpe({"a b", "b c"})), "abc"), (Texts{"ab", "c"}));
  EXPECT_EQ(bpe_pieces(testing::tiny_vocab(testing::tiny_bpe({"b c", "a b"})), "abc"), (Texts{"a", "bc"}));
}

TEST(BpeTokenizer, EqualPairsMergeLeftmostFirst) {
  EXPECT_EQ(bpe_pieces(testing::tiny_vocab(testing::tiny_bpe({"a a"})), "aaa"), (Texts{"aa", "a"}));
}

TEST(BpeTokenizer, SpacesAreByteLevelSymbolsInsideTheirPiece) {
  const Vocab vocab = testing::tiny_vocab(testing::tiny_bpe({"\xC4\xA0 w", "\xC4\xA0w o"}));
  EXPECT_EQ(bpe_pieces(vocab, "x wo"), (Texts{"x", " wo"}));
}

TEST(BpeTokenizer, MergeResultThatIsNotATokenFallsBackToItsBytes) {
  testing::TinyVocab v = testing::tiny_bpe({"a b"});
  v.merges.push_back("ab c");  // "abc" is not a token
  EXPECT_EQ(bpe_pieces(testing::tiny_vocab(v), "abc"), (Texts{"a", "b", "c"}));
}

TEST(BpeTokenizer, IgnoreMergesEmitsAWholeWordTokenDirectly) {
  // "abc" is a token but no merge reaches it; llama-bpe takes it whole.
  EXPECT_EQ(bpe_pieces(testing::tiny_vocab(testing::tiny_bpe({"a b"}, {"abc"}, "llama-bpe")), "abc"), (Texts{"abc"}));
  EXPECT_EQ(bpe_pieces(testing::tiny_vocab(testing::tiny_bpe({"a b"}, {"abc"}, "qwen2")), "abc"), (Texts{"ab", "c"}));
}

TEST(BpeTokenizer, NonAsciiTextTokenizesThroughByteSymbols) {
  EXPECT_EQ(bpe_pieces(testing::tiny_vocab(testing::tiny_bpe({})), "\xC3\xA9"), (Texts{"\xC3", "\xA9"}));
}

TEST(BpeTokenizer, CachedAndUncachedResultsAgreeOnEveryPiece) {
  MET_REQUIRE_SHARED(path, "tokenizer-vectors/ggml-vocab-llama-bpe.gguf");
  auto tokenizer = testing::load_tokenizer(path);
  ASSERT_TRUE(tokenizer.ok());
  auto bpe = BpeTokenizer::create(tokenizer->vocab());
  ASSERT_TRUE(bpe.ok());
  auto pre = PreTokenizer::create(tokenizer->vocab().pre().kind);
  ASSERT_TRUE(pre.ok());
  const std::string text = "the cat sat on the mat; the cat sat on the mat again, 1234 times!";
  for (int round = 0; round < 2; ++round) {  // the second round hits the cache
    std::vector<std::string_view> pieces;
    pre->split(text, pieces);
    std::vector<TokenId> cached;
    std::vector<TokenId> uncached;
    bpe->encode(text, cached);
    for (std::string_view piece : pieces) bpe->encode_piece_uncached(piece, uncached);
    EXPECT_EQ(cached, uncached);
  }
}

TEST(BpeTokenizer, UnknownPreTokenizerIsRefusedAtLoad) {
  testing::TinyVocab v = testing::tiny_bpe({"a b"}, {}, "no-such-pre");
  auto vocab = Vocab::from_gguf(testing::tiny_metadata(v));
  ASSERT_FALSE(vocab.ok());
  EXPECT_EQ(vocab.status().code(), StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace met
