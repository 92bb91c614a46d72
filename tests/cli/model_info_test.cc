// Tests for ModelInfo (src/cli/model_info.h).
#include "cli/model_info.h"

#include <gtest/gtest.h>

#include "model/random_model.h"
#include "testing/shared_data.h"
#include "testing/temp_dir.h"

namespace met {
namespace {

Result<ModelInfo> info_of(const std::string& path) {
  MET_ASSIGN_OR_RETURN(GgufFile f, GgufFile::open(path));
  return gather_model_info(f, path);
}

TEST(ModelInfo, DescribesStories260K) {
  MET_REQUIRE_SHARED(path, "models/stories260K.gguf");
  auto info = info_of(path);
  ASSERT_TRUE(info.ok()) << info.status().to_string();
  ASSERT_TRUE(info->hparams.has_value()) << info->hparams_error;
  EXPECT_EQ(info->hparams->num_layers, 5u);
  EXPECT_EQ(info->hparams->embedding_length, 64u);
  EXPECT_EQ(info->hparams->num_heads, 8u);
  EXPECT_EQ(info->hparams->num_kv_heads, 4u);
  EXPECT_EQ(info->hparams->feed_forward_length, 172u);
  EXPECT_EQ(info->vocab_size, 512u);
  EXPECT_EQ(info->vocab_model, "llama");
  EXPECT_EQ(info->num_params, 292800u);
  EXPECT_EQ(info->by_dtype.at("f32").num_tensors, 48u);
  EXPECT_FALSE(info->has_chat_template);
}

TEST(ModelInfo, SkipsSpecialTokenIdsThatMeanNone) {
  MET_REQUIRE_SHARED(path, "models/stories260K.gguf");
  auto info = info_of(path);
  ASSERT_TRUE(info.ok());
  for (const auto& t : info->special_tokens) EXPECT_NE(t.role, "pad");  // stored as 2^32-1
  ASSERT_FALSE(info->special_tokens.empty());
  EXPECT_EQ(info->special_tokens[0].role, "bos");
  EXPECT_EQ(info->special_tokens[0].text, "<s>");
}

TEST(ModelInfo, VocabOnlyFileStillReportsItsVocab) {
  MET_REQUIRE_SHARED(path, "tokenizer-vectors/ggml-vocab-gpt-2.gguf");
  auto info = info_of(path);
  ASSERT_TRUE(info.ok()) << info.status().to_string();
  EXPECT_EQ(info->vocab_model, "gpt2");
  EXPECT_GT(info->vocab_size, 50000u);
  EXPECT_GT(info->num_merges, 0u);
  EXPECT_EQ(info->num_tensors, 0u);
}

TEST(ModelInfo, MadeModelReportsDtypesAndTemplate) {
  testing::TempDir dir;
  RandomModelSpec s;
  s.num_layers = 1;
  s.vocab_size = 512;
  s.dtype = GgmlType::kQ8_0;
  ASSERT_TRUE(make_random_model(s, dir.file("m.gguf")).ok());
  auto info = info_of(dir.file("m.gguf"));
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->by_dtype.at("q8_0").num_tensors, 9u);
  EXPECT_EQ(info->by_dtype.at("f32").num_tensors, 3u);
  EXPECT_TRUE(info->has_chat_template);
  EXPECT_EQ(info->file_type, 7u);
  const auto j = model_info_json(*info);
  EXPECT_EQ(j["hparams"]["layers"], 1);
  EXPECT_EQ(j["tensors"]["by_dtype"]["q8_0"]["tensors"], 9);
  const std::string text = render_model_info_text(*info);
  EXPECT_NE(text.find("MOSTLY_Q8_0"), std::string::npos) << text;
}

}  // namespace
}  // namespace met
