// Tests for add_hf_tokenizer_metadata (src/hf/hf_tokenizer.h) through met's
// Tokenizer: the shared TinyStories tokenizer against expected.jsonl's ids
// and texts (skipped with a message when ../shared is absent), and small
// tokenizer.json files written here.
#include "hf/hf_tokenizer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gguf/token_kind.h"
#include "hf_test_support.h"
#include "testing/shared_data.h"
#include "tokenizer/tokenizer.h"

namespace met {
namespace {

using ::testing::HasSubstr;

constexpr EncodeOptions kWithBos{.add_special = true, .parse_special = false};

Result<Tokenizer> tokenizer_of(const std::string& tokenizer_json, const std::string& config_json,
                               uint32_t vocab_size = 0, GgufMetadata* out = nullptr) {
  GgufMetadata md;
  MET_RETURN_IF_ERROR(add_hf_tokenizer_metadata(tokenizer_json, config_json, vocab_size, md));
  if (out != nullptr) *out = md;
  return Tokenizer::from_gguf(md);
}

TEST(HfTokenizer, TheTinyStoriesPromptsEncodeToTheExpectedIds) {
  MET_REQUIRE_SHARED(dir, "models/tinystories-656k-hf");
  Result<Tokenizer> tok =
      tokenizer_of(testing::read_file(dir + "/tokenizer.json"), testing::read_file(dir + "/tokenizer_config.json"));
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  const std::vector<testing::ExpectedRun> runs = testing::read_expected_runs(dir + "/expected.jsonl");
  ASSERT_EQ(runs.size(), 5u);
  for (const testing::ExpectedRun& r : runs) {
    EXPECT_EQ(tok->encode(r.prompt, kWithBos), r.prompt_ids) << r.prompt;
    EXPECT_EQ(tok->decode(r.prompt_ids), r.prompt);
    EXPECT_EQ(tok->decode(r.output_ids), r.output_text) << r.prompt;
    std::vector<TokenId> all = r.prompt_ids;
    all.insert(all.end(), r.output_ids.begin(), r.output_ids.end());
    EXPECT_EQ(tok->decode(all), r.prompt + r.output_text);  // what a server streams
  }
}

TEST(HfTokenizer, TheTinyStoriesVocabKeepsItsSpecialTokensAndFlags) {
  MET_REQUIRE_SHARED(dir, "models/tinystories-656k-hf");
  GgufMetadata md;
  Result<Tokenizer> tok = tokenizer_of(testing::read_file(dir + "/tokenizer.json"),
                                       testing::read_file(dir + "/tokenizer_config.json"), 2048, &md);
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  const Vocab& v = tok->vocab();
  EXPECT_EQ(v.model(), VocabModel::kSpm);
  EXPECT_EQ(v.size(), 2048u);
  EXPECT_EQ(v.merges().size(), 1967u);
  EXPECT_EQ(v.token(0).kind, TokenKind::kUnknown);
  EXPECT_EQ(v.token(1).kind, TokenKind::kControl);
  EXPECT_EQ(v.token(2).kind, TokenKind::kControl);
  EXPECT_EQ(v.token(296).kind, TokenKind::kNormal);  // "▁<|start_story|>Once▁upon▁a▁time,▁" is a plain piece
  EXPECT_EQ(v.special().bos, 1);
  EXPECT_EQ(v.special().eos, 2);
  EXPECT_EQ(v.special().unk, 0);
  EXPECT_EQ(v.special().pad, 0);
  EXPECT_TRUE(v.add_bos());
  EXPECT_FALSE(v.add_eos());
  EXPECT_TRUE(v.add_space_prefix());
  EXPECT_TRUE(v.is_eog(2));
  EXPECT_FALSE(md.contains("tokenizer.chat_template"));
}

TEST(HfTokenizer, RunsOfCharactersOutsideTheVocabBecomeOneUnk) {
  MET_REQUIRE_SHARED(dir, "models/tinystories-656k-hf");
  Result<Tokenizer> tok =
      tokenizer_of(testing::read_file(dir + "/tokenizer.json"), testing::read_file(dir + "/tokenizer_config.json"));
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  auto count_unk = [&](std::string_view text) {
    const std::vector<TokenId> ids = tok->encode(text);
    return std::count(ids.begin(), ids.end(), 0);
  };
  EXPECT_EQ(count_unk("caf\xc3\xa9\xc3\xb6\t"), 1);  // é ö tab: one fused <unk> (README.md)
  EXPECT_EQ(count_unk("\xc3\xa9 a \xc3\xb6"), 2);    // separated by known text: two
  EXPECT_EQ(count_unk("Once upon a time"), 0);
}

TEST(HfTokenizer, MergesApplyByRankOverMetaSpaceText) {
  Result<Tokenizer> tok = tokenizer_of(testing::tiny_hf_tokenizer_json(), "", 10);
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  // tiny vocab: <unk> <s> </s> ▁ a b c ▁a ab ▁ab; merges "▁ a", "a b", "▁a b".
  EXPECT_EQ(tok->encode("ab", kWithBos), (std::vector<TokenId>{1, 9}));
  EXPECT_EQ(tok->encode("abab"), (std::vector<TokenId>{9, 8}));
  EXPECT_EQ(tok->encode("a b"), (std::vector<TokenId>{7, 3, 5}));
  EXPECT_EQ(tok->encode("", kWithBos), (std::vector<TokenId>{1}));  // empty text stays empty
  EXPECT_EQ(tok->decode(std::vector<TokenId>{1, 7, 3, 5}), "a b");
  EXPECT_TRUE(tok->vocab().add_bos());  // from the post-processor's template: no tokenizer_config.json
}

TEST(HfTokenizer, IdsPastTheFilesUpToVocabSizeArePadding) {
  GgufMetadata md;
  Result<Tokenizer> tok = tokenizer_of(testing::tiny_hf_tokenizer_json(), "", 12, &md);
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  ASSERT_EQ(tok->vocab().size(), 12u);
  EXPECT_EQ(tok->vocab().token(11).text, "[PAD11]");
  EXPECT_EQ(tok->vocab().token(11).kind, TokenKind::kUnused);
}

TEST(HfTokenizer, ATokenPastConfigsVocabSizeIsRefused) {
  GgufMetadata md;
  const Status s = add_hf_tokenizer_metadata(testing::tiny_hf_tokenizer_json(), "", 9, md);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("token id 9 ('\xe2\x96\x81" "ab') is past config.json's vocab_size 9"));
}

TEST(HfTokenizer, ChatTemplateAndSpecialTokensComeFromTokenizerConfig) {
  GgufMetadata md;
  Result<Tokenizer> tok = tokenizer_of(
      testing::tiny_hf_tokenizer_json(),
      R"({"bos_token": {"content": "<s>"}, "eos_token": "</s>", "add_bos_token": false,
          "chat_template": [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "D"}]})",
      10, &md);
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  EXPECT_FALSE(tok->vocab().add_bos());
  EXPECT_EQ(tok->vocab().special().eos, 2);
  EXPECT_EQ(*md.get_string("tokenizer.chat_template"), "D");
}

nlohmann::json tiny_json() { return nlohmann::json::parse(testing::tiny_hf_tokenizer_json()); }

TEST(HfTokenizer, UnsupportedTokenizersAreRefusedNamingWhatWasFound) {
  nlohmann::json unigram = tiny_json();
  unigram["model"]["type"] = "Unigram";
  nlohmann::json nfkc = tiny_json();
  nfkc["normalizer"] = {{"type", "NFKC"}};
  nlohmann::json spaces = tiny_json();
  spaces["normalizer"] = nullptr;
  nlohmann::json byte_level = tiny_json();
  byte_level["normalizer"] = nullptr;
  byte_level["pre_tokenizer"] = {{"type", "Sequence"},
                                 {"pretokenizers",
                                  {{{"type", "Split"}, {"pattern", {{"Regex", "\\w+"}}}, {"behavior", "Isolated"}},
                                   {{"type", "ByteLevel"}, {"use_regex", false}}}}};
  const struct {
    nlohmann::json tok;
    const char* message;
  } cases[] = {
      {unigram, "tokenizer.json: model type 'Unigram' is not supported"},
      {nfkc, "tokenizer.json: normalizer {\"type\":\"NFKC\"} is not supported"},
      {spaces, "keeps spaces as spaces is not supported"},
      {byte_level, "pre_tokenizer regexes [\"\\\\w+\"] match no pre-tokenizer met knows"},
  };
  for (const auto& c : cases) {
    GgufMetadata md;
    const Status s = add_hf_tokenizer_metadata(c.tok.dump(), "", 0, md);
    ASSERT_FALSE(s.ok()) << c.message;
    EXPECT_THAT(s.message(), HasSubstr(c.message));
  }
  GgufMetadata md;
  EXPECT_THAT(add_hf_tokenizer_metadata("{", "", 0, md).message(), HasSubstr("tokenizer.json is not a JSON object"));
}

TEST(HfTokenizer, ByteLevelBpeFindsItsPreTokenizerByRegex) {
  // Qwen2's tokenizer.json pre-tokenizer: its Split regex, then ByteLevel without its own regex.
  nlohmann::json tok = tiny_json();
  tok["normalizer"] = nullptr;
  tok["pre_tokenizer"] = {
      {"type", "Sequence"},
      {"pretokenizers",
       {{{"type", "Split"},
         {"pattern",
          {{"Regex",
            "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
            "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}}},
         {"behavior", "Isolated"}},
        {{"type", "ByteLevel"}, {"use_regex", false}}}}};
  tok["decoder"] = {{"type", "ByteLevel"}};
  tok["post_processor"] = nullptr;
  tok["model"]["unk_token"] = nullptr;
  tok["model"]["vocab"] = {{"a", 0}, {"b", 1}, {"ab", 2}, {"<|endoftext|>", 3}};
  tok["model"]["merges"] = nlohmann::json::array({nlohmann::json::array({"a", "b"})});  // the newer [l, r] form
  tok["added_tokens"] = {{{"id", 3}, {"content", "<|endoftext|>"}, {"special", true}}};
  GgufMetadata md;
  const Status s = add_hf_tokenizer_metadata(tok.dump(), R"({"eos_token": "<|endoftext|>"})", 0, md);
  ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(*md.get_string("tokenizer.ggml.model"), "gpt2");
  EXPECT_EQ(*md.get_string("tokenizer.ggml.pre"), "qwen2");
  EXPECT_EQ(*md.get_string_array("tokenizer.ggml.merges"), (std::vector<std::string>{"a b"}));
  Result<Tokenizer> t = Tokenizer::from_gguf(md);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->encode("abab"), (std::vector<TokenId>{2, 2}));
}

}  // namespace
}  // namespace met
