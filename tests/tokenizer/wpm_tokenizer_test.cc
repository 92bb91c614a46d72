// Tests for src/tokenizer/wpm_tokenizer.h.
#include "tokenizer/wpm_tokenizer.h"

#include <gtest/gtest.h>

#include "tokenizer/tokenizer_fixtures.h"

namespace met {
namespace {

// A BERT-style vocab as GGUF stores it: "▁" marks word-initial pieces.
testing::TinyVocab bert(std::vector<std::string> pieces) {
  testing::TinyVocab v;
  v.model = "bert";
  v.tokens = {"[PAD]", "[UNK]", "[CLS]", "[SEP]"};
  v.types = {3, 3, 3, 3};
  for (auto& p : pieces) {
    v.tokens.push_back(std::move(p));
    v.types.push_back(1);
  }
  v.extra = {{"tokenizer.ggml.unknown_token_id", GgufValue(uint32_t{1})},
             {"tokenizer.ggml.cls_token_id", GgufValue(uint32_t{2})},
             {"tokenizer.ggml.seperator_token_id", GgufValue(uint32_t{3})},
             {"tokenizer.ggml.padding_token_id", GgufValue(uint32_t{0})}};
  return v;
}

std::vector<std::string> wpm_pieces(const Vocab& vocab, std::string_view text) {
  std::vector<TokenId> ids;
  WpmTokenizer(vocab).encode(text, ids);
  std::vector<std::string> texts;
  for (TokenId id : ids) texts.push_back(vocab.token(id).text);
  return texts;
}

using Texts = std::vector<std::string>;
const std::string kW = "\xE2\x96\x81";  // ▁

TEST(WpmTokenizer, UncasedVocabLowercasesAndStripsAccents) {
  const Vocab vocab = testing::tiny_vocab(bert({kW + "apfel", kW + "hello"}));
  EXPECT_TRUE(vocab.lowercase());
  EXPECT_TRUE(vocab.strip_accents());
  EXPECT_EQ(WpmTokenizer(vocab).words("\xC3\x84pfel HeLLo"), (Texts{"apfel", "hello"}));
}

TEST(WpmTokenizer, CasedVocabKeepsCaseAndAccents) {
  const Vocab vocab = testing::tiny_vocab(bert({kW + "Hello"}));
  EXPECT_FALSE(vocab.lowercase());
  EXPECT_EQ(WpmTokenizer(vocab).words("Hello \xC3\x84pfel"), (Texts{"Hello", "\xC3\x84pfel"}));
}

TEST(WpmTokenizer, PunctuationAndCjkBecomeOneCharacterWords) {
  const Vocab vocab = testing::tiny_vocab(bert({kW + "a"}));
  EXPECT_EQ(WpmTokenizer(vocab).words("y'all! $5 \xE6\x88\x91\xE6\x83\xB3x"),
            (Texts{"y", "'", "all", "!", "$", "5", "\xE6\x88\x91", "\xE6\x83\xB3", "x"}));
}

TEST(WpmTokenizer, ControlCharactersAreDroppedAndWhitespaceSplits) {
  const Vocab vocab = testing::tiny_vocab(bert({kW + "a"}));
  EXPECT_EQ(WpmTokenizer(vocab).words("a\x01" "b\xE2\x80\x8B" "c\tD\xE3\x80\x80" "e"),
            (Texts{"abc", "d", "e"}));
}

TEST(WpmTokenizer, WordsAreCutIntoTheLongestKnownPieces) {
  const Vocab vocab = testing::tiny_vocab(bert({kW + "un", kW + "unaff", "aff", "able", "a", "ble"}));
  EXPECT_EQ(wpm_pieces(vocab, "unaffable"), (Texts{kW + "unaff", "able"}));
}

TEST(WpmTokenizer, AWordThatCannotBeCutIsOneUnknownToken) {
  const Vocab vocab = testing::tiny_vocab(bert({kW + "un", "able"}));
  EXPECT_EQ(wpm_pieces(vocab, "unxable un"), (Texts{"[UNK]", kW + "un"}));
}

TEST(WpmTokenizer, ALoneSpaceMarkStartsAWordNoLongerPieceStarts) {
  // llama.cpp matches pieces over "▁" + word byte by byte, so "▁" alone is
  // taken where no "▁"-initial piece covers the word's first letters.
  const Vocab vocab = testing::tiny_vocab(bert({kW, "qu", "ick", kW + "the"}));
  EXPECT_EQ(wpm_pieces(vocab, "quick the"), (Texts{kW, "qu", "ick", kW + "the"}));
  const Vocab without = testing::tiny_vocab(bert({"qu", "ick"}));
  EXPECT_EQ(wpm_pieces(without, "quick"), (Texts{"[UNK]"}));
}

TEST(WpmTokenizer, AWordLongerThanAHundredCharactersIsUnknown) {
  const Vocab vocab = testing::tiny_vocab(bert({kW + "a", "a"}));
  EXPECT_EQ(wpm_pieces(vocab, std::string(100, 'a')).size(), 100u);
  EXPECT_EQ(wpm_pieces(vocab, std::string(101, 'a')), (Texts{"[UNK]"}));
}

}  // namespace
}  // namespace met
