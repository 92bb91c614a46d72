// Tests for architecture tensor lists (src/model/arch.h).
#include "model/arch.h"

#include <map>

#include <gtest/gtest.h>

#include "gguf/gguf_file.h"
#include "testing/shared_data.h"

namespace met {
namespace {

ModelHParams small_hparams() {
  ModelHParams hp;
  hp.num_layers = 2;
  hp.embedding_length = 64;
  hp.feed_forward_length = 96;
  hp.num_heads = 4;
  hp.num_kv_heads = 2;
  hp.head_dim = 16;
  hp.vocab_size = 600;
  return hp;
}

std::map<std::string, TensorSpec> by_name(const std::vector<TensorSpec>& specs) {
  std::map<std::string, TensorSpec> m;
  for (const auto& s : specs) m.emplace(s.name, s);
  return m;
}

TEST(ArchTensors, LlamaHasNineTensorsPerLayerPlusThree) {
  auto specs = arch_tensors(Arch::kLlama, small_hparams(), false);
  EXPECT_EQ(specs.size(), 3u + 9u * 2u);
  auto m = by_name(specs);
  EXPECT_EQ(m.at("token_embd.weight").shape, (std::vector<uint64_t>{64, 600}));
  EXPECT_EQ(m.at("blk.1.attn_k.weight").shape, (std::vector<uint64_t>{64, 32}));
  EXPECT_EQ(m.at("blk.0.ffn_down.weight").shape, (std::vector<uint64_t>{96, 64}));
  EXPECT_EQ(m.at("blk.0.attn_norm.weight").role, TensorRole::kNorm);
}

TEST(ArchTensors, TiedOutputOmitsTheOutputMatrix) {
  auto m = by_name(arch_tensors(Arch::kLlama, small_hparams(), true));
  EXPECT_FALSE(m.contains("output.weight"));
  EXPECT_TRUE(m.contains("output_norm.weight"));
}

TEST(ArchTensors, Qwen2AddsQkvBiases) {
  auto m = by_name(arch_tensors(Arch::kQwen2, small_hparams(), false));
  EXPECT_EQ(m.at("blk.0.attn_q.bias").shape, (std::vector<uint64_t>{64}));
  EXPECT_EQ(m.at("blk.0.attn_v.bias").shape, (std::vector<uint64_t>{32}));
  EXPECT_EQ(m.at("blk.0.attn_v.bias").role, TensorRole::kBias);
}

TEST(ArchTensors, Qwen3AddsPerHeadQkNorms) {
  auto m = by_name(arch_tensors(Arch::kQwen3, small_hparams(), false));
  EXPECT_EQ(m.at("blk.1.attn_q_norm.weight").shape, (std::vector<uint64_t>{16}));
  EXPECT_EQ(m.at("blk.1.attn_k_norm.weight").shape, (std::vector<uint64_t>{16}));
  EXPECT_FALSE(m.contains("blk.0.attn_q.bias"));
}

TEST(ArchNames, MistralIsStoredAsLlama) {
  EXPECT_EQ(gguf_arch_name(Arch::kMistral), "llama");
  EXPECT_EQ(parse_arch("mistral"), Arch::kMistral);
  EXPECT_EQ(parse_arch("gpt2"), std::nullopt);
}

TEST(ArchTensors, MatchStories260KTensorTable) {
  MET_REQUIRE_SHARED(path, "models/stories260K.gguf");
  auto file = GgufFile::open(path);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  auto hp = read_hparams(file->metadata());
  ASSERT_TRUE(hp.ok());
  auto specs = arch_tensors(Arch::kLlama, *hp, false);
  ASSERT_EQ(specs.size(), file->tensors().size());
  for (const auto& s : specs) {
    const GgufTensorInfo* t = file->find_tensor(s.name);
    ASSERT_NE(t, nullptr) << s.name;
    EXPECT_EQ(t->shape, s.shape) << s.name;
  }
}

}  // namespace
}  // namespace met
