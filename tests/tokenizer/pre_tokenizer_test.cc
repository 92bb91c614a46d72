// Tests for src/tokenizer/pre_tokenizer.h, including command-r's split, whose
// vectors come without a vocab (../shared/tokenizer-vectors/missing-vocab).
#include "tokenizer/pre_tokenizer.h"

#include <gtest/gtest.h>

#include "testing/shared_data.h"
#include "tokenizer/tokenizer_fixtures.h"

namespace met {
namespace {

std::vector<std::string> split(PreTokenizerKind kind, std::string_view text) {
  auto pre = PreTokenizer::create(kind);
  EXPECT_TRUE(pre.ok()) << pre.status().to_string();
  std::vector<std::string_view> pieces;
  pre->split(text, pieces);
  return {pieces.begin(), pieces.end()};
}

using Pieces = std::vector<std::string>;

TEST(PreTokenizer, Llama3SplitsContractionsCaseInsensitivelyAndDigitsInThrees) {
  EXPECT_EQ(split(PreTokenizerKind::kLlama3, "I'VE got 12345 apples"),
            (Pieces{"I", "'VE", " got", " ", "123", "45", " apples"}));
  EXPECT_EQ(split(PreTokenizerKind::kLlama3, "hi!\n\n  there"), (Pieces{"hi", "!\n\n", " ", " there"}));
}

TEST(PreTokenizer, Qwen2SplitsDigitsOneByOne) {
  EXPECT_EQ(split(PreTokenizerKind::kQwen2, "x 2024"), (Pieces{"x", " ", "2", "0", "2", "4"}));
}

TEST(PreTokenizer, Gpt2KeepsOneSpaceWithTheNextWord) {
  EXPECT_EQ(split(PreTokenizerKind::kGpt2, "Hello   world's"),
            (Pieces{"Hello", "  ", " world", "'s"}));
}

TEST(PreTokenizer, SequencedRegexesSplitTheGapsOfEarlierOnes) {
  // deepseek-coder: newlines first, then letters, punctuation, CJK, digits one by one.
  EXPECT_EQ(split(PreTokenizerKind::kDeepseekCoder, "ab\ncd 12"),
            (Pieces{"ab", "\n", "cd", " ", "1", "2"}));
  // falcon: punctuation runs first, then GPT-2's pattern, then digit triples.
  EXPECT_EQ(split(PreTokenizerKind::kFalcon, "a,b 12345"), (Pieces{"a", ",", "b", " ", "123", "45"}));
}

TEST(PreTokenizer, CommandRIsolatesEveryDigitThenSplitsLikeGpt2) {
  auto config = pre_tokenizer_config("command-r");
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->kind, PreTokenizerKind::kStarcoder);
  const auto kind = config->kind;
  EXPECT_EQ(split(kind, "ied 4 \xC2\xBD months"),
            (Pieces{"ied", " ", "4", " ", "\xC2\xBD", " months"}));
  EXPECT_EQ(split(kind, " 3333"), (Pieces{" ", "3", "3", "3", "3"}));
  EXPECT_EQ(split(kind, "Hello, y'all! How are you"),
            (Pieces{"Hello", ",", " y", "'", "all", "!", " How", " are", " you"}));
  EXPECT_EQ(split(kind, "I've been 'told he's"), (Pieces{"I", "'ve", " been", " '", "told", " he", "'s"}));
  EXPECT_EQ(split(kind, "   Hello\n    Hello"),
            (Pieces{"  ", " Hello", "\n   ", " Hello"}));
}

TEST(PreTokenizer, CommandRGivesNoMorePiecesThanItsVectorsHaveTokens) {
  MET_REQUIRE_SHARED(inp, "tokenizer-vectors/missing-vocab/ggml-vocab-command-r.gguf.inp");
  const auto cases = testing::load_vector_cases(inp.substr(0, inp.size() - 4));
  ASSERT_EQ(cases.size(), 46u);
  auto pre = PreTokenizer::create(PreTokenizerKind::kStarcoder);
  ASSERT_TRUE(pre.ok());
  for (const auto& c : cases) {
    std::vector<std::string_view> pieces;
    pre->split(c.text, pieces);
    EXPECT_LE(pieces.size(), c.expected.size()) << "'" << c.text << "'";
  }
}

TEST(PreTokenizer, PiecesCoverTheInputExactlyForEveryKind) {
  const std::string text =
      "Hello, y'all! How're you \xF0\x9F\x98\x81 ?\xE6\x88\x91\xE6\x83\xB3 1314151 \t\n\n  x"
      " \xD0\xBD\xD0\xB5\xD1\x89\xD0\xBE  ";
  for (auto kind : {PreTokenizerKind::kDefault, PreTokenizerKind::kGpt2, PreTokenizerKind::kLlama3,
                    PreTokenizerKind::kQwen2, PreTokenizerKind::kQwen35, PreTokenizerKind::kDeepseekLlm,
                    PreTokenizerKind::kDeepseekCoder, PreTokenizerKind::kDeepseekV3,
                    PreTokenizerKind::kFalcon, PreTokenizerKind::kStarcoder, PreTokenizerKind::kGpt4o,
                    PreTokenizerKind::kTekken}) {
    std::string joined;
    for (const std::string& piece : split(kind, text)) {
      EXPECT_FALSE(piece.empty());
      joined += piece;
    }
    EXPECT_EQ(joined, text) << static_cast<int>(kind);
  }
}

TEST(PreTokenizer, NamesMapToKindsAndLlamaCppDefaults) {
  auto llama3 = pre_tokenizer_config("llama-bpe");
  ASSERT_TRUE(llama3.ok());
  EXPECT_EQ(llama3->kind, PreTokenizerKind::kLlama3);
  EXPECT_TRUE(llama3->ignore_merges);
  EXPECT_EQ(llama3->add_bos, true);
  auto qwen2 = pre_tokenizer_config("qwen2");
  ASSERT_TRUE(qwen2.ok());
  EXPECT_EQ(qwen2->kind, PreTokenizerKind::kQwen2);
  EXPECT_FALSE(qwen2->ignore_merges);
  EXPECT_FALSE(qwen2->add_bos.has_value());
  EXPECT_EQ(pre_tokenizer_config("")->kind, PreTokenizerKind::kDefault);
  auto unknown = pre_tokenizer_config("no-such-pre");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kUnimplemented);
}

TEST(PreTokenizer, EmptyTextGivesNoPieces) { EXPECT_TRUE(split(PreTokenizerKind::kLlama3, "").empty()); }

}  // namespace
}  // namespace met
