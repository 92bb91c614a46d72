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
  nlohmann::json word_level = tiny_json();
  word_level["model"]["type"] = "WordLevel";
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
      {word_level, "tokenizer.json: model type 'WordLevel' is not supported"},
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

std::string to_base64(const std::vector<uint8_t>& bytes) {
  constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const uint32_t group = static_cast<uint32_t>(bytes[i]) << 16 |
                           (i + 1 < bytes.size() ? static_cast<uint32_t>(bytes[i + 1]) << 8 : 0u) |
                           (i + 2 < bytes.size() ? bytes[i + 2] : 0u);
    for (size_t k = 0; k < 4; ++k) out += i + k <= bytes.size() ? kAlphabet[(group >> (18 - 6 * k)) & 63] : '=';
  }
  return out;
}

// A charsmap with the one rule "A" -> "a" (precompiled_charsmap.h's layout):
// the root's base 0x40 puts its child 'A' at 0 ^ 0x40 ^ 0x41 = 1; that node
// has a leaf and base 3, so its value unit is at 1 ^ 3 = 2: offset 0 of "a\0".
std::vector<uint8_t> one_rule_charsmap() {
  const uint32_t units[] = {0x40u << 10, 0x41u | 1u << 8 | 3u << 10, 1u << 31};
  std::vector<uint8_t> blob = {12, 0, 0, 0};
  for (const uint32_t unit : units) {
    for (int i = 0; i < 4; ++i) blob.push_back(static_cast<uint8_t>(unit >> (8 * i)));
  }
  blob.push_back('a');
  blob.push_back(0);
  return blob;
}

// T5's tokenizer.json shape over a tiny vocab.
nlohmann::json tiny_unigram_json() {
  return nlohmann::json::parse(R"({
    "added_tokens": [{"id": 0, "content": "<pad>", "special": true}, {"id": 1, "content": "</s>", "special": true},
                     {"id": 2, "content": "<unk>", "special": true}, {"id": 7, "content": "<x>", "special": false}],
    "normalizer": {"type": "Sequence", "normalizers": [
        {"type": "Precompiled", "precompiled_charsmap": ")" + to_base64(one_rule_charsmap()) + R"("},
        {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]},
    "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
        {"type": "WhitespaceSplit"}, {"type": "Metaspace", "replacement": "▁", "add_prefix_space": true}]},
    "post_processor": {"type": "TemplateProcessing", "single": [{"Sequence": {"id": "A", "type_id": 0}},
                                                                {"SpecialToken": {"id": "</s>", "type_id": 0}}]},
    "decoder": {"type": "Metaspace", "replacement": "▁", "add_prefix_space": true},
    "model": {"type": "Unigram", "unk_id": 2, "vocab": [["<pad>", 0], ["</s>", 0], ["<unk>", 0], ["▁a", -1],
              ["▁b", -2], ["b", -1.5], ["▁", -3], ["<x>", 0]]}})");
}

TEST(HfTokenizer, UnigramBecomesLlamaCppsT5Metadata) {
  GgufMetadata md;
  const Status s = add_hf_tokenizer_metadata(tiny_unigram_json().dump(), "", 10, md);
  ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(*md.get_string("tokenizer.ggml.model"), "t5");
  EXPECT_EQ(*md.get_string("tokenizer.ggml.pre"), "default");
  EXPECT_EQ(*md.get_f32_array("tokenizer.ggml.scores"),
            (std::vector<float>{0, 0, 0, -1, -2, -1.5f, -3, 0, -10000, -10000}));
  EXPECT_EQ(*md.get_int_array("tokenizer.ggml.token_type"), (std::vector<int64_t>{3, 3, 2, 1, 1, 1, 1, 4, 5, 5}));
  EXPECT_EQ(*md.get_i64("tokenizer.ggml.unknown_token_id"), 2);
  EXPECT_TRUE(*md.get_bool("tokenizer.ggml.add_eos_token"));  // the post-processor's template ends in </s>
  EXPECT_FALSE(*md.get_bool("tokenizer.ggml.add_bos_token"));
  EXPECT_TRUE(*md.get_bool("tokenizer.ggml.add_space_prefix"));
  EXPECT_TRUE(*md.get_bool("tokenizer.ggml.remove_extra_whitespaces"));
  const GgufValue* charsmap = md.find("tokenizer.ggml.precompiled_charsmap");
  ASSERT_NE(charsmap, nullptr);
  EXPECT_EQ(*charsmap, GgufValue(GgufArray{GgufType::kUint8, one_rule_charsmap()}));
}

TEST(HfTokenizer, UnigramEncodesThroughTheCharsmapAndTheBestPath) {
  Result<Tokenizer> tok = tokenizer_of(tiny_unigram_json().dump(), R"({"eos_token": "</s>"})");
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  EXPECT_EQ(tok->vocab().model(), VocabModel::kUgm);
  // "A" -> "a" by the charsmap; "▁a▁b" at -3 beats "▁a"+"▁"+"b" at -5.5.
  EXPECT_EQ(tok->encode("  A   b ", kWithBos), (std::vector<TokenId>{3, 4, 1}));
  EXPECT_EQ(tok->encode("bb"), (std::vector<TokenId>{4, 5}));  // "▁b"+"b" at -3.5 beats "▁"+"b"+"b" at -6
  EXPECT_EQ(tok->encode("a<x>b"), (std::vector<TokenId>{3, 7, 4}));  // the added token, then "▁" again
  EXPECT_EQ(tok->encode("a?b"), (std::vector<TokenId>{3, 2, 5}));
  EXPECT_EQ(tok->decode(std::vector<TokenId>{3, 4, 1}), "a b");
}

TEST(HfTokenizer, UnigramByteFallbackTypesByteTokens) {
  nlohmann::json tok = tiny_unigram_json();
  tok["model"]["byte_fallback"] = true;
  tok["model"]["vocab"].push_back({"<0xC3>", 0});
  tok["model"]["vocab"].push_back({"<0xA9>", 0});
  tok["added_tokens"].erase(3);  // "<x>" gives its id 7 back to the vocab's "<x>" piece
  Result<Tokenizer> tok_or = tokenizer_of(tok.dump(), "");
  ASSERT_TRUE(tok_or.ok()) << tok_or.status().to_string();
  EXPECT_EQ(tok_or->vocab().token(8).kind, TokenKind::kByte);
  EXPECT_EQ(tok_or->encode("a\xC3\xA9"), (std::vector<TokenId>{3, 8, 9}));
  EXPECT_EQ(tok_or->decode(std::vector<TokenId>{3, 8, 9}), "a\xC3\xA9");
}

TEST(HfTokenizer, UnsupportedUnigramPartsAreRefusedNamingWhatWasFound) {
  nlohmann::json lowercase = tiny_unigram_json();
  lowercase["normalizer"]["normalizers"].push_back({{"type", "Lowercase"}});
  nlohmann::json no_metaspace = tiny_unigram_json();
  no_metaspace["pre_tokenizer"] = {{"type", "WhitespaceSplit"}};
  nlohmann::json nfkc_only = tiny_unigram_json();
  nfkc_only["normalizer"] = {{"type", "NFKC"}};
  nlohmann::json strip_only = tiny_unigram_json();
  strip_only["normalizer"] = {{"type", "Strip"}, {"strip_left", true}, {"strip_right", true}};
  strip_only["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", "\u2581"}, {"prepend_scheme", "always"}};
  nlohmann::json bad_piece = tiny_unigram_json();
  bad_piece["model"]["vocab"][3] = "\u2581a";
  nlohmann::json bad_base64 = tiny_unigram_json();
  bad_base64["normalizer"]["normalizers"][0]["precompiled_charsmap"] = "not base64!";
  const struct {
    nlohmann::json tok;
    const char* message;
  } cases[] = {
      {lowercase, "normalizer {\"type\":\"Lowercase\"} is not supported for a Unigram model"},
      {no_metaspace, "a Unigram tokenizer without a Metaspace pre_tokenizer"},
      {nfkc_only, "an NFKC normalizer without a Precompiled charsmap is not representable"},
      {strip_only, "a Strip normalizer without collapsing spaces"},
      {bad_piece, "model.vocab entry \"\u2581a\" is not [piece, score]"},
      {bad_base64, "precompiled_charsmap is not base64"},
  };
  for (const auto& c : cases) {
    GgufMetadata md;
    const Status s = add_hf_tokenizer_metadata(c.tok.dump(), "", 0, md);
    ASSERT_FALSE(s.ok()) << c.message;
    EXPECT_THAT(s.message(), HasSubstr(c.message));
  }
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
