// Tests for src/tokenizer/special_token_splitter.h.
#include "tokenizer/special_token_splitter.h"

#include <gtest/gtest.h>

#include "tokenizer/tokenizer_fixtures.h"

namespace met {
namespace {

// <|im_start|> and <|im_end|> CONTROL, <think> USER_DEFINED, <|im USER_DEFINED.
Vocab chat_vocab(bool phi3 = false) {
  testing::TinyVocab v = testing::tiny_spm({"a", "b"});
  v.tokens.insert(v.tokens.end(), {"<|im_start|>", "<|im_end|>", "<think>", "<|im"});
  v.types.insert(v.types.end(), {3, 3, 4, 4});
  v.scores.insert(v.scores.end(), {0, 0, 0, 0});
  if (phi3) v.extra.emplace_back("general.name", GgufValue(std::string("Phi3")));
  auto vocab = Vocab::from_gguf(testing::tiny_metadata(v));
  EXPECT_TRUE(vocab.ok()) << vocab.status().to_string();
  return std::move(vocab).value();
}

struct Frag {
  std::string text;
  std::optional<std::string> token;
  bool operator==(const Frag&) const = default;
};

std::vector<Frag> fragments(const Vocab& vocab, std::string_view text, bool parse_special) {
  SpecialTokenSplitter splitter(vocab);
  std::vector<Frag> out;
  for (const TextFragment& f : splitter.split(text, parse_special)) {
    if (f.token) {
      out.push_back({"", vocab.token(*f.token).text});
    } else {
      out.push_back({std::string(f.text), std::nullopt});
    }
  }
  return out;
}

TEST(SpecialTokenSplitter, ControlTokensMatchOnlyWhenParsingSpecial) {
  const Vocab vocab = chat_vocab();
  EXPECT_EQ(fragments(vocab, "<|im_start|>user", true),
            (std::vector<Frag>{{"", "<|im_start|>"}, {"user", std::nullopt}}));
  // Without parse_special only the user-defined "<|im" matches inside it.
  EXPECT_EQ(fragments(vocab, "<|im_start|>user", false),
            (std::vector<Frag>{{"", "<|im"}, {"_start|>user", std::nullopt}}));
}

TEST(SpecialTokenSplitter, UserDefinedTokensMatchEvenWithoutParsingSpecial) {
  const Vocab vocab = chat_vocab();
  EXPECT_EQ(fragments(vocab, "a<think>b</think>", false),
            (std::vector<Frag>{{"a", std::nullopt}, {"", "<think>"}, {"b</think>", std::nullopt}}));
}

TEST(SpecialTokenSplitter, LongerTokensAreMatchedBeforeShorterOnes) {
  const Vocab vocab = chat_vocab();
  EXPECT_EQ(fragments(vocab, "x<|im_end|><|im", true),
            (std::vector<Frag>{{"x", std::nullopt}, {"", "<|im_end|>"}, {"", "<|im"}}));
}

TEST(SpecialTokenSplitter, Phi3SpecialTokensEatTheWhitespaceAfterThem) {
  const Vocab vocab = chat_vocab(/*phi3=*/true);
  EXPECT_EQ(fragments(vocab, "<|im_end|>\n  hi", true),
            (std::vector<Frag>{{"", "<|im_end|>"}, {"hi", std::nullopt}}));
  EXPECT_EQ(fragments(chat_vocab(), "<|im_end|>\n  hi", true),
            (std::vector<Frag>{{"", "<|im_end|>"}, {"\n  hi", std::nullopt}}));
}

TEST(SpecialTokenSplitter, TextWithoutSpecialTokensIsOneFragment) {
  const Vocab vocab = chat_vocab();
  EXPECT_EQ(fragments(vocab, "plain text", true), (std::vector<Frag>{{"plain text", std::nullopt}}));
  EXPECT_TRUE(fragments(vocab, "", true).empty());
}

}  // namespace
}  // namespace met
