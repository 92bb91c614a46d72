// llama.cpp's tokenizer vectors (../shared/tokenizer-vectors): every case of
// the 12 complete sets, no BOS/EOS, special tokens not parsed. Prints the
// pass count per vocab ("llama-bpe: 46/46"). Also the round trips:
// decode(encode(text)) == text on every input for llama-spm and the
// byte-level vocabs, and every llama-spm token decodes and re-encodes to the
// same text (llama.cpp's test-tokenizer-1-spm).
#include <cstdio>

#include <gtest/gtest.h>

#include "testing/shared_data.h"
#include "tokenizer/tokenizer_fixtures.h"

namespace met {
namespace {

std::string ids_to_string(const std::vector<TokenId>& ids) {
  std::string s;
  for (TokenId id : ids) s += " " + std::to_string(id);
  return s;
}

void expect_every_case(const std::string& name, const std::string& path) {
  auto tokenizer = testing::load_tokenizer(path);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().to_string();
  const auto cases = testing::load_vector_cases(path);
  ASSERT_EQ(cases.size(), 46u) << path;
  int passed = 0;
  for (const auto& c : cases) {
    const std::vector<TokenId> got = tokenizer->encode(c.text);
    if (got == c.expected) {
      ++passed;
    } else {
      ADD_FAILURE() << name << ": '" << c.text << "'\n  expected:" << ids_to_string(c.expected)
                    << "\n  got:     " << ids_to_string(got);
    }
  }
  std::printf("%s: %d/%zu\n", name.c_str(), passed, cases.size());
}

#define MET_VECTOR_TEST(TestName, vocab)                                       \
  TEST(TokenizerVectors, TestName) {                                           \
    MET_REQUIRE_SHARED(path, "tokenizer-vectors/ggml-vocab-" vocab ".gguf"); \
    expect_every_case(vocab, path);                                            \
  }

MET_VECTOR_TEST(LlamaSpmMatchesEveryCase, "llama-spm")
MET_VECTOR_TEST(Phi3MatchesEveryCase, "phi-3")
MET_VECTOR_TEST(LlamaBpeMatchesEveryCase, "llama-bpe")
MET_VECTOR_TEST(Qwen2MatchesEveryCase, "qwen2")
MET_VECTOR_TEST(Gpt2MatchesEveryCase, "gpt-2")
MET_VECTOR_TEST(DeepseekLlmMatchesEveryCase, "deepseek-llm")
MET_VECTOR_TEST(DeepseekCoderMatchesEveryCase, "deepseek-coder")
MET_VECTOR_TEST(FalconMatchesEveryCase, "falcon")
MET_VECTOR_TEST(MptMatchesEveryCase, "mpt")
MET_VECTOR_TEST(RefactMatchesEveryCase, "refact")
MET_VECTOR_TEST(StarcoderMatchesEveryCase, "starcoder")
MET_VECTOR_TEST(BertBgeMatchesEveryCase, "bert-bge")

// llama.cpp's WordPiece keeps the first code point of each character's
// canonical decomposition (its NFD table maps a code point to that alone):
// a Hangul syllable becomes its leading consonant, a letter with accents its
// base letter. Ids from llama-tokenize on ggml-vocab-bert-bge.gguf (without
// its [CLS] 101 and [SEP] 102).
TEST(TokenizerVectors, BertBgeTakesEachCharactersFirstDecomposedCodePointAsLlamaCppDoes) {
  MET_REQUIRE_SHARED(path, "tokenizer-vectors/ggml-vocab-bert-bge.gguf");
  auto tokenizer = testing::load_tokenizer(path);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().to_string();
  EXPECT_EQ(tokenizer->encode("한국어 안녕하세요"),
            (std::vector<TokenId>{1469, 29991, 29999, 1463, 29992, 30005, 29997, 29999}));
  EXPECT_EQ(tokenizer->encode("Ǘ 가각 ﬁ 각ǘ"), (std::vector<TokenId>{1057, 1455, 29991, 1984, 1455, 2226}));
  EXPECT_EQ(tokenizer->encode("café naïve 한 Ünïcödé"), (std::vector<TokenId>{7668, 15743, 1469, 27260}));
}

void expect_round_trips(const std::string& path) {
  auto tokenizer = testing::load_tokenizer(path);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().to_string();
  for (const std::string& text : testing::load_vector_inputs(path + ".inp")) {
    EXPECT_EQ(tokenizer->decode(tokenizer->encode(text)), text);
  }
}

#define MET_ROUND_TRIP_TEST(TestName, vocab)                                   \
  TEST(TokenizerVectors, TestName) {                                           \
    MET_REQUIRE_SHARED(path, "tokenizer-vectors/ggml-vocab-" vocab ".gguf"); \
    expect_round_trips(path);                                                  \
  }

MET_ROUND_TRIP_TEST(LlamaSpmDecodesEveryInputBackToItself, "llama-spm")
MET_ROUND_TRIP_TEST(LlamaBpeDecodesEveryInputBackToItself, "llama-bpe")
MET_ROUND_TRIP_TEST(Qwen2DecodesEveryInputBackToItself, "qwen2")
MET_ROUND_TRIP_TEST(Gpt2DecodesEveryInputBackToItself, "gpt-2")
MET_ROUND_TRIP_TEST(DeepseekLlmDecodesEveryInputBackToItself, "deepseek-llm")
MET_ROUND_TRIP_TEST(DeepseekCoderDecodesEveryInputBackToItself, "deepseek-coder")
MET_ROUND_TRIP_TEST(FalconDecodesEveryInputBackToItself, "falcon")
MET_ROUND_TRIP_TEST(MptDecodesEveryInputBackToItself, "mpt")
MET_ROUND_TRIP_TEST(RefactDecodesEveryInputBackToItself, "refact")
MET_ROUND_TRIP_TEST(StarcoderDecodesEveryInputBackToItself, "starcoder")

TEST(TokenizerVectors, EveryLlamaSpmTokenDecodesAndReencodesToTheSameText) {
  MET_REQUIRE_SHARED(path, "tokenizer-vectors/ggml-vocab-llama-spm.gguf");
  auto tokenizer = testing::load_tokenizer(path);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().to_string();
  const EncodeOptions parse{.add_special = false, .parse_special = true};
  int failures = 0;
  for (TokenId id = 0; id < static_cast<TokenId>(tokenizer->vocab().size()); ++id) {
    const TokenId one[] = {id};
    const std::string text = tokenizer->decode(one, /*skip_special=*/false);
    const std::string again = tokenizer->decode(tokenizer->encode(text, parse), false);
    if (again != text && ++failures <= 10) {
      ADD_FAILURE() << "token " << id << " decodes to '" << text << "', which re-encodes to '" << again << "'";
    }
  }
  EXPECT_EQ(failures, 0);
}

}  // namespace
}  // namespace met
