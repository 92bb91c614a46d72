// Tests for src/tokenizer/vocab.h.
#include "tokenizer/vocab.h"

#include <gtest/gtest.h>

#include "testing/shared_data.h"
#include "tokenizer/tokenizer_fixtures.h"

namespace met {
namespace {

Result<Vocab> load(const testing::TinyVocab& v) { return Vocab::from_gguf(testing::tiny_metadata(v)); }

TEST(Vocab, ReadsWhatMakeModelWritesForSentencePiece) {
  SyntheticVocabOptions options;
  options.kind = VocabKind::kSpm;
  options.size = 1000;
  auto synthetic = make_synthetic_vocab(options);
  ASSERT_TRUE(synthetic.ok()) << synthetic.status().to_string();
  GgufMetadata md;
  write_vocab_metadata(*synthetic, md);
  auto vocab = Vocab::from_gguf(md);
  ASSERT_TRUE(vocab.ok()) << vocab.status().to_string();
  EXPECT_EQ(vocab->model(), VocabModel::kSpm);
  EXPECT_EQ(vocab->size(), synthetic->tokens.size());
  EXPECT_EQ(vocab->special().bos, static_cast<TokenId>(synthetic->bos_id));
  EXPECT_EQ(vocab->special().eos, static_cast<TokenId>(synthetic->eos_id));
  EXPECT_EQ(vocab->special().unk, static_cast<TokenId>(synthetic->unk_id));
  EXPECT_EQ(vocab->add_bos(), synthetic->add_bos);
  EXPECT_TRUE(vocab->add_space_prefix());
  EXPECT_TRUE(vocab->is_eog(static_cast<TokenId>(synthetic->eos_id)));
  for (size_t i = 0; i < synthetic->tokens.size(); ++i) {
    EXPECT_EQ(static_cast<int>(vocab->token(static_cast<TokenId>(i)).kind), synthetic->token_types[i]);
    EXPECT_EQ(vocab->find(synthetic->tokens[i]), static_cast<TokenId>(i));
  }
}

TEST(Vocab, ReadsWhatMakeModelWritesForByteLevelBpe) {
  SyntheticVocabOptions options;
  options.kind = VocabKind::kBpe;
  options.size = 1000;
  auto synthetic = make_synthetic_vocab(options);
  ASSERT_TRUE(synthetic.ok()) << synthetic.status().to_string();
  GgufMetadata md;
  write_vocab_metadata(*synthetic, md);
  auto vocab = Vocab::from_gguf(md);
  ASSERT_TRUE(vocab.ok()) << vocab.status().to_string();
  EXPECT_EQ(vocab->model(), VocabModel::kBpe);
  EXPECT_EQ(vocab->pre_name(), synthetic->pre);
  EXPECT_EQ(vocab->merges().size(), synthetic->merges.size());
  EXPECT_FALSE(vocab->add_space_prefix());
}

TEST(Vocab, MissingIdsFollowLlamaCppDefaultsPerModel) {
  auto spm = load(testing::tiny_spm({"a"}));
  ASSERT_TRUE(spm.ok());
  EXPECT_EQ(spm->special().bos, 1);
  EXPECT_EQ(spm->special().eos, 2);
  EXPECT_EQ(spm->special().unk, 0);
  EXPECT_FALSE(spm->special().pad.has_value());
  EXPECT_TRUE(spm->add_bos());
  EXPECT_FALSE(spm->add_eos());
  EXPECT_TRUE(spm->add_space_prefix());
  testing::TinyVocab bpe = testing::tiny_bpe({"a b"});
  bpe.extra.clear();  // no ids: llama.cpp's default 11 for both
  auto b = load(bpe);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->special().bos, 11);
  EXPECT_EQ(b->special().eos, 11);
  EXPECT_FALSE(b->special().unk.has_value());
  EXPECT_FALSE(b->add_bos());
}

TEST(Vocab, MinusOneMaxUint32AndPastTheEndIdsMeanNoToken) {
  testing::TinyVocab v = testing::tiny_spm({"a"});
  v.extra = {{"tokenizer.ggml.bos_token_id", GgufValue(int32_t{-1})},
             {"tokenizer.ggml.eos_token_id", GgufValue(uint32_t{0xFFFFFFFF})},
             {"tokenizer.ggml.padding_token_id", GgufValue(uint32_t{100000})},
             {"tokenizer.ggml.add_bos_token", GgufValue(false)}};
  auto vocab = load(v);
  ASSERT_TRUE(vocab.ok()) << vocab.status().to_string();
  EXPECT_FALSE(vocab->special().bos.has_value());
  EXPECT_FALSE(vocab->special().eos.has_value());
  EXPECT_FALSE(vocab->special().pad.has_value());
  EXPECT_TRUE(vocab->eog_ids().empty());
}

TEST(Vocab, AddBosWithoutABosTokenIsDataLoss) {
  testing::TinyVocab v = testing::tiny_spm({"a"});
  v.extra = {{"tokenizer.ggml.bos_token_id", GgufValue(int32_t{-1})}};
  auto vocab = load(v);
  ASSERT_FALSE(vocab.ok());
  EXPECT_EQ(vocab.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(vocab.status().message().find("add_bos_token"), std::string::npos);
}

TEST(Vocab, ModelKeyMustBePresentAndKnown) {
  GgufMetadata empty;
  EXPECT_EQ(Vocab::from_gguf(empty).status().code(), StatusCode::kNotFound);
  testing::TinyVocab v = testing::tiny_spm({"a"});
  v.model = "rwkv";
  EXPECT_EQ(load(v).status().code(), StatusCode::kUnimplemented);
}

TEST(Vocab, UnigramFollowsLlamaCppsT5Defaults) {
  testing::TinyVocab v;
  v.model = "t5";
  v.tokens = {"<pad>", "</s>", "<unk>", "a"};
  auto vocab = load(v);
  ASSERT_TRUE(vocab.ok()) << vocab.status().to_string();
  EXPECT_EQ(vocab->model(), VocabModel::kUgm);
  EXPECT_EQ(vocab_model_name(vocab->model()), "t5");
  EXPECT_FALSE(vocab->special().bos.has_value());
  EXPECT_EQ(vocab->special().eos, 1);
  EXPECT_EQ(vocab->special().unk, 2);
  EXPECT_EQ(vocab->special().pad, 0);
  EXPECT_FALSE(vocab->add_bos());
  EXPECT_TRUE(vocab->add_eos());
  EXPECT_FALSE(vocab->add_space_prefix());
  EXPECT_FALSE(vocab->remove_extra_whitespaces());
  EXPECT_TRUE(vocab->precompiled_charsmap().empty());
}

TEST(Vocab, UnigramWithoutAnEosTokenDoesNotAddOne) {
  testing::TinyVocab v;
  v.model = "t5";
  v.tokens = {"<pad>"};
  auto vocab = load(v);
  ASSERT_TRUE(vocab.ok()) << vocab.status().to_string();
  EXPECT_FALSE(vocab->add_eos());
}

TEST(Vocab, UnigramReadsItsNormalizationKeys) {
  testing::TinyVocab v = testing::tiny_ugm({{"a", -1}});
  v.extra.emplace_back("tokenizer.ggml.remove_extra_whitespaces", GgufValue(true));
  v.extra.emplace_back("tokenizer.ggml.precompiled_charsmap",
                       GgufValue(GgufArray{GgufType::kInt8, std::vector<int8_t>{4, 0, -1}}));
  auto vocab = load(v);
  ASSERT_TRUE(vocab.ok()) << vocab.status().to_string();
  EXPECT_TRUE(vocab->remove_extra_whitespaces());
  EXPECT_EQ(vocab->precompiled_charsmap(), (std::vector<uint8_t>{4, 0, 0xFF}));
  v.extra.back().second = GgufValue(GgufArray{GgufType::kFloat32, std::vector<float>{1.0f}});
  EXPECT_FALSE(load(v).ok());
}

TEST(Vocab, DuplicateTokenTextIsDataLoss) {
  auto vocab = load(testing::tiny_spm({"a", "a"}));
  ASSERT_FALSE(vocab.ok());
  EXPECT_EQ(vocab.status().code(), StatusCode::kDataLoss);
}

TEST(Vocab, ShortScoreOrTypeArraysAreDataLoss) {
  testing::TinyVocab v = testing::tiny_spm({"a", "b"});
  v.types.pop_back();
  EXPECT_EQ(load(v).status().code(), StatusCode::kDataLoss);
  v = testing::tiny_spm({"a", "b"});
  v.scores.pop_back();
  EXPECT_EQ(load(v).status().code(), StatusCode::kDataLoss);
}

TEST(Vocab, EmptyTokenTextGetsAPlaceholder) {
  testing::TinyVocab v = testing::tiny_spm({"a", ""});
  auto vocab = load(v);
  ASSERT_TRUE(vocab.ok()) << vocab.status().to_string();
  EXPECT_EQ(vocab->token(260).text, "[EMPTY_260]");
}

TEST(Vocab, MergesSplitAtTheFirstSpaceAfterTheFirstByte) {
  testing::TinyVocab v = testing::tiny_bpe({"a b"});
  v.merges = {"a b", "  b", "nospace"};
  auto vocab = load(v);
  ASSERT_TRUE(vocab.ok());
  ASSERT_EQ(vocab->merges().size(), 3u);
  EXPECT_EQ(vocab->merges()[0], (std::pair<std::string, std::string>{"a", "b"}));
  EXPECT_EQ(vocab->merges()[1], (std::pair<std::string, std::string>{" ", "b"}));
  EXPECT_EQ(vocab->merges()[2], (std::pair<std::string, std::string>{"", ""}));
}

// A synthetic byte-level vocab with `controls` as control tokens.
Result<Vocab> vocab_with_controls(std::vector<std::string> controls) {
  SyntheticVocabOptions options;
  options.kind = VocabKind::kBpe;
  options.size = 1000;
  options.control_tokens = std::move(controls);
  MET_ASSIGN_OR_RETURN(SyntheticVocab synthetic, make_synthetic_vocab(options));
  GgufMetadata md;
  write_vocab_metadata(synthetic, md);
  return Vocab::from_gguf(md);
}

bool ends_generation(const Vocab& v, std::string_view text) {
  const std::optional<TokenId> id = v.find(text);
  EXPECT_TRUE(id.has_value()) << text;
  return id.has_value() && v.is_eog(*id);
}

// Harmony (gpt-oss): <|return|> ends the answer and <|call|> a tool call;
// <|end|> only ends a message (the analysis before the answer), so it is not
// EOG where both are present (llama.cpp's rule); Phi-3's <|end|> stays EOG.
TEST(Vocab, HarmonyEndsGenerationAtReturnAndCallNotAtEnd) {
  Result<Vocab> harmony = vocab_with_controls(
      {"<|start|>", "<|channel|>", "<|message|>", "<|end|>", "<|return|>", "<|call|>", "<|constrain|>"});
  ASSERT_TRUE(harmony.ok()) << harmony.status().to_string();
  EXPECT_TRUE(ends_generation(*harmony, "<|return|>"));
  EXPECT_TRUE(ends_generation(*harmony, "<|call|>"));
  EXPECT_FALSE(ends_generation(*harmony, "<|end|>"));
  EXPECT_FALSE(ends_generation(*harmony, "<|channel|>"));
  Result<Vocab> phi3 = vocab_with_controls({"<|user|>", "<|assistant|>", "<|end|>"});
  ASSERT_TRUE(phi3.ok()) << phi3.status().to_string();
  EXPECT_TRUE(ends_generation(*phi3, "<|end|>"));
}

TEST(Vocab, EndOfGenerationCoversEosEotAndChatEndTokens) {
  MET_REQUIRE_SHARED(path, "tokenizer-vectors/ggml-vocab-qwen2.gguf");
  auto tokenizer = testing::load_tokenizer(path);
  ASSERT_TRUE(tokenizer.ok());
  const Vocab& vocab = tokenizer->vocab();
  EXPECT_TRUE(vocab.is_eog(151645));   // <|im_end|>: eos and eot
  EXPECT_TRUE(vocab.is_eog(151643));   // <|endoftext|>, a CONTROL token named like an end
  EXPECT_FALSE(vocab.is_eog(151644));  // <|im_start|>
  EXPECT_FALSE(vocab.add_bos());
}

TEST(Vocab, SharedVocabsLoadWithTheirDocumentedShape) {
  MET_REQUIRE_SHARED(path, "tokenizer-vectors/ggml-vocab-llama-bpe.gguf");
  auto tokenizer = testing::load_tokenizer(path);
  ASSERT_TRUE(tokenizer.ok());
  const Vocab& vocab = tokenizer->vocab();
  EXPECT_EQ(vocab.size(), 128256u);
  EXPECT_EQ(vocab.special().bos, 128000);
  EXPECT_EQ(vocab.special().eot, 128009);
  EXPECT_TRUE(vocab.pre().ignore_merges);
  EXPECT_TRUE(vocab.add_bos());
}

}  // namespace
}  // namespace met
