// add_hf_tokenizer_metadata against llama.cpp's tokenizer vectors
// (../shared/tokenizer-vectors; skipped with a message where absent): each
// vocab GGUF is written back as the tokenizer.json Hugging Face publishes for
// it (byte-level: the vocab, merges and the published Split regex; Llama 2's
// SentencePiece vocab: merges made as transformers' SentencePieceExtractor
// makes them, over "▁" text with byte fallback), converted, and must encode
// every case as the vectors say. Unigram: ALBERT's SentencePiece model as a
// trimmed tokenizer.json with ids from Hugging Face tokenizers, committed under
// tests/tokenizer/data (made by make_ugm_vectors.mjs there).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "gguf/gguf_file.h"
#include "gguf/token_kind.h"
#include "hf/hf_tokenizer.h"
#include "hf_test_support.h"
#include "testing/shared_data.h"
#include "tokenizer/tokenizer.h"

namespace met {
namespace {

using Json = nlohmann::json;

struct VectorCase {
  std::string text;
  std::vector<TokenId> ids;
};

std::vector<VectorCase> vector_cases(const std::string& gguf_path) {
  const std::string inputs = testing::read_file(gguf_path + ".inp");
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::istringstream out(testing::read_file(gguf_path + ".out"));
  std::vector<VectorCase> cases;
  size_t pos = 0;
  for (size_t at = inputs.find(sep); at != std::string::npos; pos = at + sep.size(), at = inputs.find(sep, pos)) {
    std::string line;
    if (!std::getline(out, line)) break;
    VectorCase c{inputs.substr(pos, at - pos), {}};
    std::istringstream ids(line);
    for (TokenId id; ids >> id;) c.ids.push_back(id);
    cases.push_back(std::move(c));
  }
  return cases;
}

// The vocab as tokenizer.json's model.vocab (NORMAL and BYTE tokens) and
// added_tokens (CONTROL: special; USER_DEFINED: not).
void add_vocab(const GgufMetadata& md, Json& tok) {
  const std::vector<std::string> tokens = *md.get_string_array("tokenizer.ggml.tokens");
  const std::vector<int64_t> types = *md.get_int_array("tokenizer.ggml.token_type");
  tok["model"]["vocab"] = Json::object();
  tok["added_tokens"] = Json::array();
  for (size_t id = 0; id < tokens.size(); ++id) {
    const auto kind = static_cast<TokenKind>(types[id]);
    if (kind == TokenKind::kControl || kind == TokenKind::kUserDefined) {
      tok["added_tokens"].push_back({{"id", id}, {"content", tokens[id]}, {"special", kind == TokenKind::kControl}});
    } else {
      tok["model"]["vocab"][tokens[id]] = id;
    }
  }
}

Json byte_level_json(const GgufMetadata& md, const std::string& regex) {
  Json tok = {{"normalizer", nullptr}, {"decoder", {{"type", "ByteLevel"}}}, {"post_processor", nullptr}};
  tok["model"] = {{"type", "BPE"}, {"unk_token", nullptr}, {"merges", *md.get_string_array("tokenizer.ggml.merges")}};
  if (regex.empty()) {
    tok["pre_tokenizer"] = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}};
  } else {
    tok["pre_tokenizer"] = {{"type", "Sequence"},
                            {"pretokenizers",
                             {{{"type", "Split"}, {"pattern", {{"Regex", regex}}}, {"behavior", "Isolated"}},
                              {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}};
  }
  add_vocab(md, tok);
  return tok;
}

void expect_every_case(const std::string& path, const Json& tokenizer_json) {
  GgufMetadata md;
  const Status s = add_hf_tokenizer_metadata(tokenizer_json.dump(), R"({"add_bos_token": false})", 0, md);
  ASSERT_TRUE(s.ok()) << s.to_string();
  Result<Tokenizer> tok = Tokenizer::from_gguf(md);
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  const std::vector<VectorCase> cases = vector_cases(path);
  ASSERT_GT(cases.size(), 40u);
  for (const VectorCase& c : cases) EXPECT_EQ(tok->encode(c.text), c.ids) << "'" << c.text << "'";
}

// The Split regexes of the tokenizer.json files Hugging Face publishes.
constexpr const char* kLlama3Regex =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
constexpr const char* kQwen2Regex =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

TEST(HfTokenizerVectors, ByteLevelTokenizerJsonsEncodeAsTheirVocabs) {
  for (const auto& [vocab, regex] : {std::pair<const char*, const char*>{"qwen2", kQwen2Regex},
                                     {"llama-bpe", kLlama3Regex},
                                     {"gpt-2", ""}}) {
    MET_REQUIRE_SHARED(path, std::string("tokenizer-vectors/ggml-vocab-") + vocab + ".gguf");
    Result<GgufFile> file = GgufFile::open(path);
    ASSERT_TRUE(file.ok()) << file.status().to_string();
    SCOPED_TRACE(vocab);
    expect_every_case(path, byte_level_json(file->metadata(), regex));
  }
}

// transformers' SentencePieceExtractor: every split of every piece into two
// pieces, by the merged piece's score (highest first), ties in vocab order,
// within a piece by the ids of its halves.
std::vector<std::string> sentencepiece_merges(const std::vector<std::string>& tokens,
                                              const std::vector<float>& scores) {
  std::map<std::string, size_t, std::less<>> ids;
  for (size_t i = 0; i < tokens.size(); ++i) ids.emplace(tokens[i], i);
  struct Merge {
    size_t left, right;
    float score;
  };
  std::vector<Merge> merges;
  for (size_t id = 0; id < tokens.size(); ++id) {
    const std::string& piece = tokens[id];
    std::vector<Merge> local;
    for (size_t at = 1; at < piece.size(); ++at) {
      if ((static_cast<uint8_t>(piece[at]) & 0xC0) == 0x80) continue;  // split between characters only
      const auto l = ids.find(piece.substr(0, at)), r = ids.find(piece.substr(at));
      if (l != ids.end() && r != ids.end()) local.push_back({l->second, r->second, scores[id]});
    }
    std::sort(local.begin(), local.end(), [](const Merge& a, const Merge& b) {
      return std::pair(a.left, a.right) < std::pair(b.left, b.right);
    });
    merges.insert(merges.end(), local.begin(), local.end());
  }
  std::stable_sort(merges.begin(), merges.end(), [](const Merge& a, const Merge& b) { return a.score > b.score; });
  std::vector<std::string> out;
  for (const Merge& m : merges) out.push_back(tokens[m.left] + " " + tokens[m.right]);
  return out;
}

TEST(HfTokenizerVectors, LlamaTwosSentencePieceTokenizerJsonEncodesAsItsVocab) {
  MET_REQUIRE_SHARED(path, "tokenizer-vectors/ggml-vocab-llama-spm.gguf");
  Result<GgufFile> file = GgufFile::open(path);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  const GgufMetadata& md = file->metadata();
  const std::string s = "\xe2\x96\x81";
  Json tok = {
      {"normalizer",
       {{"type", "Sequence"},
        {"normalizers",
         {{{"type", "Prepend"}, {"prepend", s}},
          {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", s}}}}}},
      {"pre_tokenizer", nullptr},
      {"post_processor", nullptr},
      {"decoder", {{"type", "Sequence"}, {"decoders", Json::array()}}}};
  tok["model"] = {{"type", "BPE"}, {"unk_token", "<unk>"}, {"fuse_unk", true}, {"byte_fallback", true},
                  {"merges", sentencepiece_merges(*md.get_string_array("tokenizer.ggml.tokens"),
                                                  *md.get_f32_array("tokenizer.ggml.scores"))}};
  add_vocab(md, tok);
  // Llama 2's <unk> is UNKNOWN in the GGUF, an added special token in tokenizer.json.
  tok["added_tokens"].push_back({{"id", 0}, {"content", "<unk>"}, {"special", true}});
  tok["model"]["vocab"].erase("<unk>");
  expect_every_case(path, tok);
}

// BERT's WordPiece tokenizer.json: GGUF's "▁word" pieces bare, its bare
// continuation pieces with "##" again, [BRACKETED] pieces as they are.
TEST(HfTokenizerVectors, BertWordPieceTokenizerJsonEncodesAsItsVocab) {
  MET_REQUIRE_SHARED(path, "tokenizer-vectors/ggml-vocab-bert-bge.gguf");
  Result<GgufFile> file = GgufFile::open(path);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  const GgufMetadata& md = file->metadata();
  const std::vector<std::string> tokens = *md.get_string_array("tokenizer.ggml.tokens");
  const std::vector<int64_t> types = *md.get_int_array("tokenizer.ggml.token_type");
  const std::string s = "\xe2\x96\x81";
  Json tok = {{"normalizer", {{"type", "BertNormalizer"}, {"lowercase", true}, {"strip_accents", nullptr}}},
              {"pre_tokenizer", {{"type", "BertPreTokenizer"}}},
              {"post_processor", {{"type", "BertProcessing"}, {"sep", {"[SEP]", 102}}, {"cls", {"[CLS]", 101}}}},
              {"added_tokens", Json::array()}};
  tok["model"] = {{"type", "WordPiece"}, {"unk_token", "[UNK]"}, {"continuing_subword_prefix", "##"},
                  {"vocab", Json::object()}};
  for (size_t id = 0; id < tokens.size(); ++id) {
    const std::string& t = tokens[id];
    if (static_cast<TokenKind>(types[id]) == TokenKind::kControl) {
      tok["added_tokens"].push_back({{"id", id}, {"content", t}, {"special", true}});
    } else if (t.starts_with(s)) {
      tok["model"]["vocab"][t.substr(s.size())] = id;
    } else {
      tok["model"]["vocab"][t.starts_with('[') && t.ends_with(']') ? t : "##" + t] = id;
    }
  }
  GgufMetadata converted;
  const Status status = add_hf_tokenizer_metadata(
      tok.dump(), R"({"unk_token": "[UNK]", "sep_token": "[SEP]", "cls_token": "[CLS]", "pad_token": "[PAD]",
                      "mask_token": "[MASK]"})",
      0, converted);
  ASSERT_TRUE(status.ok()) << status.to_string();
  EXPECT_EQ(*converted.get_string_array("tokenizer.ggml.tokens"), tokens);  // llama.cpp's form exactly
  Result<Tokenizer> t = Tokenizer::from_gguf(converted);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->vocab().special().bos, 101);  // [CLS]
  EXPECT_EQ(t->vocab().special().sep, 102);
  EXPECT_TRUE(t->vocab().add_sep());
  for (const VectorCase& c : vector_cases(path)) EXPECT_EQ(t->encode(c.text), c.ids) << "'" << c.text << "'";
}

// Hugging Face splits special added tokens out of any text, as met does when
// parsing special tokens; decoding skips them as its decode(ids, true) does.
TEST(HfTokenizerVectors, AlbertUnigramTokenizerJsonEncodesAsHuggingFaceTokenizers) {
  const std::string dir = std::string(MET_SOURCE_DIR) + "/tests/tokenizer/data/";
  const std::string tokenizer_json = testing::read_file(dir + "albert-unigram.tokenizer.json");
  const std::string vectors_json = testing::read_file(dir + "albert-unigram.vectors.json");
  if (tokenizer_json.empty() || vectors_json.empty()) {
    GTEST_SKIP() << dir << "albert-unigram.{tokenizer,vectors}.json are absent (make_ugm_vectors.mjs writes them)";
  }
  const Json vectors = Json::parse(vectors_json);
  GgufMetadata md;
  const Status status = add_hf_tokenizer_metadata(tokenizer_json, "", 0, md);
  ASSERT_TRUE(status.ok()) << status.to_string();
  // The flags the SentencePiece model's normalizer spec has, as llama.cpp's converter copies them.
  EXPECT_EQ(*md.get_bool("tokenizer.ggml.add_space_prefix"), vectors["add_space_prefix"].get<bool>());
  EXPECT_EQ(*md.get_bool("tokenizer.ggml.remove_extra_whitespaces"), vectors["remove_extra_whitespaces"].get<bool>());
  Result<Tokenizer> t = Tokenizer::from_gguf(md);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  ASSERT_EQ(t->vocab().precompiled_charsmap().size(), 237539u);  // nmt_nfkc's
  int passed = 0;
  for (const Json& c : vectors["cases"]) {
    const std::string text = c["text"].get<std::string>();
    const std::vector<TokenId> ids = t->encode(text, {.add_special = false, .parse_special = true});
    EXPECT_EQ(ids, c["ids"].get<std::vector<TokenId>>()) << "'" << text << "'";
    EXPECT_EQ(t->decode(ids), c["decoded"].get<std::string>()) << "'" << text << "'";
    passed += ids == c["ids"].get<std::vector<TokenId>>() ? 1 : 0;
  }
  std::printf("albert-unigram: %d/%zu\n", passed, vectors["cases"].size());
}

}  // namespace
}  // namespace met
