// Tests for src/tokenizer/tokenizer.h. The synthetic-vocab tests need no
// ../shared; the others use its vocab-only GGUFs.
#include "tokenizer/tokenizer.h"

#include <thread>

#include <gtest/gtest.h>

#include "testing/shared_data.h"
#include "tokenizer/tokenizer_fixtures.h"

namespace met {
namespace {

const char* const kSamples[] = {
    "Hello world",
    " The quick brown fox jumps over the lazy dog.\n\nIt's 12:45, isn't it?",
    "  leading spaces, trailing spaces  ",
    "\ttabs\tand\nnewlines\r\n",
    "caf\xC3\xA9 na\xC3\xAFve \xE6\x88\x91\xE6\x83\xB3 \xF0\x9F\xA6\x99 \xD0\xBC\xD0\xB8\xD1\x80",
    "",
    "<|im_start|>user\nhi<|im_end|>",
};

Result<Tokenizer> shared_tokenizer(const std::string& path) { return testing::load_tokenizer(path); }

TEST(Tokenizer, SyntheticSentencePieceVocabRoundTripsText) {
  const Tokenizer tokenizer = testing::synthetic_tokenizer(VocabKind::kSpm);
  for (const char* text : kSamples) {
    const auto ids = tokenizer.encode(text);
    for (TokenId id : ids) EXPECT_TRUE(tokenizer.vocab().contains(id));
    EXPECT_EQ(tokenizer.decode(ids), text);
  }
}

TEST(Tokenizer, SyntheticByteLevelVocabRoundTripsText) {
  const Tokenizer tokenizer = testing::synthetic_tokenizer(VocabKind::kBpe);
  for (const char* text : kSamples) EXPECT_EQ(tokenizer.decode(tokenizer.encode(text)), text);
}

TEST(Tokenizer, AddSpecialAddsBosOnlyWhenTheVocabSaysSo) {
  const Tokenizer spm = testing::tiny_tokenizer(testing::tiny_spm({"\xE2\x96\x81" "a"}));
  EXPECT_EQ(spm.encode("a", {.add_special = true}), (std::vector<TokenId>{1, 259}));
  EXPECT_EQ(spm.encode("a"), (std::vector<TokenId>{259}));
  testing::TinyVocab no_bos = testing::tiny_spm({"\xE2\x96\x81" "a"});
  no_bos.extra = {{"tokenizer.ggml.add_bos_token", GgufValue(false)},
                  {"tokenizer.ggml.add_eos_token", GgufValue(true)}};
  EXPECT_EQ(testing::tiny_tokenizer(no_bos).encode("a", {.add_special = true}),
            (std::vector<TokenId>{259, 2}));
}

TEST(Tokenizer, SentencePieceSpacePrefixFollowsEverySpecialToken) {
  const Tokenizer tokenizer = testing::tiny_tokenizer(testing::tiny_spm({"\xE2\x96\x81" "a", "a"}));
  // "</s>" is CONTROL: parsed whole, and the text after it gets "▁" again.
  EXPECT_EQ(tokenizer.encode("a</s>a", {.parse_special = true}), (std::vector<TokenId>{259, 2, 259}));
}

testing::TinyVocab prefixed_ugm() {
  testing::TinyVocab v = testing::tiny_ugm({{"\xE2\x96\x81" "a", -1}, {"\xE2\x96\x81" "b", -1}});
  v.extra = {{"tokenizer.ggml.add_space_prefix", GgufValue(true)}};
  return v;
}

TEST(Tokenizer, UnigramAddsEosAndDecodesMetaSpacesAsSpaces) {
  const Tokenizer tokenizer = testing::tiny_tokenizer(prefixed_ugm());
  const std::vector<TokenId> ids = tokenizer.encode("a b", {.add_special = true});
  EXPECT_EQ(ids, (std::vector<TokenId>{3, 4, 1}));  // llama.cpp's t5 default: EOS, no BOS
  EXPECT_EQ(tokenizer.decode(ids), "a b");
  EXPECT_EQ(tokenizer.decode(ids, /*skip_special=*/false), "a b</s>");
  EXPECT_TRUE(tokenizer.strips_leading_space());
}

TEST(Tokenizer, UnigramSpacePrefixStartsEveryFragmentBetweenSpecialTokens) {
  const Tokenizer tokenizer = testing::tiny_tokenizer(prefixed_ugm());
  EXPECT_EQ(tokenizer.encode("a</s>b", {.parse_special = true}), (std::vector<TokenId>{3, 1, 4}));
  EXPECT_EQ(tokenizer.encode("a</s>b"), (std::vector<TokenId>{3, 2}));  // "</s>b" as text: one unknown run
}

TEST(Tokenizer, UnigramWithAMalformedCharsmapFailsToLoad) {
  testing::TinyVocab v = prefixed_ugm();
  v.extra.emplace_back("tokenizer.ggml.precompiled_charsmap", testing::charsmap_value({8, 0, 0, 0, 1, 2, 3}));
  EXPECT_FALSE(Tokenizer::from_gguf(testing::tiny_metadata(v)).ok());
}

TEST(Tokenizer, InvalidUtf8IsReplacedNotRejected) {
  const Tokenizer tokenizer = testing::synthetic_tokenizer(VocabKind::kBpe);
  const auto ids = tokenizer.encode("ok\xFF\xC3(");
  EXPECT_EQ(tokenizer.decode(ids), "ok\xEF\xBF\xBD\xEF\xBF\xBD(");
}

TEST(Tokenizer, DecodeSkipsOrRendersSpecialTokens) {
  const Tokenizer tokenizer = testing::tiny_tokenizer(testing::tiny_spm({"\xE2\x96\x81" "a"}));
  const TokenId ids[] = {1, 259, 2};
  EXPECT_EQ(tokenizer.decode(ids), "a");
  EXPECT_EQ(tokenizer.decode(ids, /*skip_special=*/false), "<s> a</s>");
}

TEST(Tokenizer, DecodeTurnsBrokenByteSequencesIntoReplacementCharacters) {
  const Tokenizer tokenizer = testing::tiny_tokenizer(testing::tiny_spm({"a"}));
  const TokenId half_euro[] = {3 + 0xE2, 3 + 0x82, 259};  // <0xE2> <0x82> a
  EXPECT_EQ(tokenizer.decode(half_euro), "\xEF\xBF\xBD" "a");
  const TokenId euro[] = {3 + 0xE2, 3 + 0x82, 3 + 0xAC};
  EXPECT_EQ(tokenizer.decode(euro), "\xE2\x82\xAC");
}

TEST(Tokenizer, PieceOfAnUnknownIdIsEmpty) {
  const Tokenizer tokenizer = testing::tiny_tokenizer(testing::tiny_spm({"a"}));
  EXPECT_EQ(tokenizer.token_to_piece(-1), "");
  EXPECT_EQ(tokenizer.token_to_piece(100000), "");
  EXPECT_EQ(tokenizer.token_to_piece(3 + 'A'), "A");
  EXPECT_EQ(tokenizer.token_to_piece(1, false), "");
  EXPECT_EQ(tokenizer.token_to_piece(1, true), "<s>");
  const TokenId ids[] = {-5, 100000};
  EXPECT_EQ(tokenizer.decode(ids), "");
}

TEST(Tokenizer, MovedTokenizerKeepsWorking) {
  Tokenizer a = testing::synthetic_tokenizer(VocabKind::kBpe);
  const auto before = a.encode("moving things around");
  Tokenizer b = std::move(a);
  EXPECT_EQ(b.encode("moving things around"), before);
}

TEST(Tokenizer, ConcurrentEncodesGiveTheSameIds) {
  const Tokenizer tokenizer = testing::synthetic_tokenizer(VocabKind::kBpe);
  const std::string text = "the same words again and again, the same words again and again";
  const auto expected = tokenizer.encode(text);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) EXPECT_EQ(tokenizer.encode(text), expected);
    });
  }
  for (auto& thread : threads) thread.join();
}

TEST(Tokenizer, HelloWorldGivesThePublishedIds) {
  MET_REQUIRE_SHARED(llama3, "tokenizer-vectors/ggml-vocab-llama-bpe.gguf");
  MET_REQUIRE_SHARED(qwen2, "tokenizer-vectors/ggml-vocab-qwen2.gguf");
  EXPECT_EQ(shared_tokenizer(llama3)->encode("Hello world"), (std::vector<TokenId>{9906, 1917}));
  EXPECT_EQ(shared_tokenizer(llama3)->encode("Hello world", {.add_special = true}),
            (std::vector<TokenId>{128000, 9906, 1917}));
  EXPECT_EQ(shared_tokenizer(qwen2)->encode("Hello world"), (std::vector<TokenId>{9707, 1879}));
}

TEST(Tokenizer, Qwen2MatchesThinkTagsEvenWithoutParsingSpecialTokens) {
  MET_REQUIRE_SHARED(path, "tokenizer-vectors/ggml-vocab-qwen2.gguf");
  auto tokenizer = shared_tokenizer(path);
  ASSERT_TRUE(tokenizer.ok());
  const auto ids = tokenizer->encode("<think>\nhmm\n</think>");
  EXPECT_EQ(ids.front(), 151667);
  EXPECT_EQ(ids.back(), 151668);
  // <|im_start|> is CONTROL: text unless special tokens are parsed.
  EXPECT_NE(tokenizer->encode("<|im_start|>").front(), 151644);
  EXPECT_EQ(tokenizer->encode("<|im_start|>user", {.parse_special = true}).front(), 151644);
}

TEST(Tokenizer, ChatPromptRoundTripsWithSpecialTokensRendered) {
  MET_REQUIRE_SHARED(path, "tokenizer-vectors/ggml-vocab-llama-bpe.gguf");
  auto tokenizer = shared_tokenizer(path);
  ASSERT_TRUE(tokenizer.ok());
  const std::string prompt =
      "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi there!<|eot_id|>";
  const auto ids = tokenizer->encode(prompt, {.parse_special = true});
  EXPECT_EQ(ids.front(), 128000);
  EXPECT_EQ(ids.back(), 128009);
  EXPECT_EQ(tokenizer->decode(ids, /*skip_special=*/false), prompt);
  EXPECT_EQ(tokenizer->decode(ids), "user\n\nHi there!");
}

TEST(Tokenizer, LongInputsOfOneCharacterClassStayFast) {
  const Tokenizer tokenizer = testing::synthetic_tokenizer(VocabKind::kBpe);
  const std::string spaces(200000, ' ');
  EXPECT_EQ(tokenizer.decode(tokenizer.encode(spaces)), spaces);
  const std::string digits(100000, '7');
  EXPECT_EQ(tokenizer.decode(tokenizer.encode(digits)), digits);
}

}  // namespace
}  // namespace met
