// Tests for quantize_model (src/model/quantize_model.h).
#include "model/quantize_model.h"

#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "gguf/gguf_file.h"
#include "tensor/quantize.h"
#include "testing/temp_dir.h"

namespace met {
namespace {

std::vector<float> dequantize(const GgufFile& f, std::string_view name) {
  const GgufTensorInfo* t = f.find_tensor(name);
  EXPECT_NE(t, nullptr) << name;
  std::vector<float> out(t->num_elements);
  EXPECT_TRUE(dequantize_row(t->type, f.tensor_data(*t), out).ok());
  return out;
}

class QuantizeModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RandomModelSpec s;
    s.num_layers = 1;
    s.embedding_length = 256;
    s.num_heads = 4;
    s.num_kv_heads = 4;
    s.feed_forward_length = 512;
    s.vocab_size = 600;
    ASSERT_TRUE(make_random_model(s, dir_.file("f32.gguf")).ok());
  }
  testing::TempDir dir_;
};

TEST_F(QuantizeModelTest, QuantizesMatricesAndCopiesNorms) {
  auto s = quantize_model(dir_.file("f32.gguf"), dir_.file("q8.gguf"), GgmlType::kQ8_0, 2);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->num_quantized, 1u + 1u + 7u);  // token_embd, output, 7 per layer
  auto in = GgufFile::open(dir_.file("f32.gguf"));
  auto out = GgufFile::open(dir_.file("q8.gguf"));
  ASSERT_TRUE(in.ok() && out.ok());
  EXPECT_EQ(out->find_tensor("blk.0.attn_q.weight")->type, GgmlType::kQ8_0);
  EXPECT_EQ(out->find_tensor("blk.0.attn_norm.weight")->type, GgmlType::kF32);
  EXPECT_EQ(*out->metadata().get_u32("general.file_type"), 7u);
  EXPECT_EQ(dequantize(*in, "blk.0.attn_norm.weight"), dequantize(*out, "blk.0.attn_norm.weight"));
  const auto a = dequantize(*in, "blk.0.ffn_up.weight");
  const auto b = dequantize(*out, "blk.0.ffn_up.weight");
  double err = 0, ref = 0;
  for (size_t i = 0; i < a.size(); ++i) err += (a[i] - b[i]) * (a[i] - b[i]), ref += a[i] * a[i];
  EXPECT_LT(std::sqrt(err / ref), 0.01);  // Q8_0 keeps 8 bits per weight
  EXPECT_EQ(*out->metadata().get_string("tokenizer.ggml.model"),
            *in->metadata().get_string("tokenizer.ggml.model"));
}

TEST_F(QuantizeModelTest, RequantizesFromAQuantizedModel) {
  ASSERT_TRUE(quantize_model(dir_.file("f32.gguf"), dir_.file("q8.gguf"), GgmlType::kQ8_0, 1).ok());
  auto s = quantize_model(dir_.file("q8.gguf"), dir_.file("q4k.gguf"), GgmlType::kQ4_K, 1);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  auto out = GgufFile::open(dir_.file("q4k.gguf"));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->find_tensor("blk.0.ffn_down.weight")->type, GgmlType::kQ4_K);
}

// llama.cpp's MOSTLY_MXFP4_MOE: 3-D expert tensors MXFP4, every other matrix
// (shared expert, attention, embeddings, output) Q8_0, routers and norms kept.
TEST(QuantizeModel, Mxfp4PutsExpertsInMxfp4AndOtherMatricesInQ8_0) {
  testing::TempDir dir;
  RandomModelSpec s;
  s.arch = Arch::kQwen3Moe;
  s.num_layers = 1;
  s.embedding_length = 128;
  s.num_heads = 4;
  s.num_kv_heads = 2;
  s.feed_forward_length = 256;
  s.vocab_size = 600;
  s.num_experts = 4;
  s.num_experts_used = 2;
  s.expert_feed_forward_length = 64;
  s.shared_expert_feed_forward_length = 96;
  ASSERT_TRUE(make_random_model(s, dir.file("f32.gguf")).ok());
  auto summary = quantize_model(dir.file("f32.gguf"), dir.file("mx.gguf"), GgmlType::kMXFP4, 2);
  ASSERT_TRUE(summary.ok()) << summary.status().to_string();
  EXPECT_TRUE(summary->fallbacks.empty());
  auto in = GgufFile::open(dir.file("f32.gguf"));
  auto out = GgufFile::open(dir.file("mx.gguf"));
  ASSERT_TRUE(in.ok() && out.ok());
  EXPECT_EQ(*out->metadata().get_u32("general.file_type"), 38u);
  for (const char* name : {"blk.0.ffn_gate_exps.weight", "blk.0.ffn_up_exps.weight", "blk.0.ffn_down_exps.weight"}) {
    EXPECT_EQ(out->find_tensor(name)->type, GgmlType::kMXFP4) << name;
  }
  for (const char* name : {"blk.0.ffn_up_shexp.weight", "blk.0.attn_q.weight", "token_embd.weight", "output.weight"}) {
    EXPECT_EQ(out->find_tensor(name)->type, GgmlType::kQ8_0) << name;
  }
  EXPECT_EQ(out->find_tensor("blk.0.ffn_gate_inp.weight")->type, GgmlType::kF32);
  EXPECT_EQ(out->find_tensor("blk.0.ffn_norm.weight")->type, GgmlType::kF32);
  // The experts' bytes are the reference codec's, row by row.
  const auto a = dequantize(*in, "blk.0.ffn_down_exps.weight");
  const GgufTensorInfo* t = out->find_tensor("blk.0.ffn_down_exps.weight");
  std::vector<uint8_t> expected(t->num_bytes);
  ASSERT_TRUE(quantize_row(GgmlType::kMXFP4, a, expected).ok());
  const auto bytes = out->tensor_data(*t);
  EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), expected.begin(), expected.end()));
}

// Rows of 288 fit 32-element blocks, not 256: llama.cpp's fallbacks.
TEST(QuantizeModel, RowsThatDoNotFitAKQuantTakeLlamaCppsFallback) {
  testing::TempDir dir;
  RandomModelSpec s;
  s.num_layers = 1;
  s.embedding_length = 288;
  s.num_heads = 4;
  s.num_kv_heads = 4;
  s.feed_forward_length = 512;
  s.vocab_size = 600;
  ASSERT_TRUE(make_random_model(s, dir.file("f32.gguf")).ok());
  for (const auto& [type, fallback] : {std::pair{GgmlType::kQ4_K, GgmlType::kQ5_0},
                                       std::pair{GgmlType::kQ5_K, GgmlType::kQ5_1},
                                       std::pair{GgmlType::kQ6_K, GgmlType::kQ8_0}}) {
    auto q = quantize_model(dir.file("f32.gguf"), dir.file("q.gguf"), type, 1);
    ASSERT_TRUE(q.ok()) << q.status().to_string();
    EXPECT_FALSE(q->fallbacks.empty());
    auto out = GgufFile::open(dir.file("q.gguf"));
    ASSERT_TRUE(out.ok());
    EXPECT_EQ(out->find_tensor("blk.0.attn_q.weight")->type, fallback) << ggml_type_name(type);
    EXPECT_EQ(out->find_tensor("blk.0.ffn_down.weight")->type, type) << ggml_type_name(type);  // rows of 512
  }
}

TEST_F(QuantizeModelTest, RefusesATypeItCannotWrite) {
  auto s = quantize_model(dir_.file("f32.gguf"), dir_.file("x.gguf"), GgmlType::kIQ2_XXS, 1);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("iq2_xxs"), std::string::npos);
}

TEST_F(QuantizeModelTest, MissingInputNamesThePath) {
  auto s = quantize_model(dir_.file("nope.gguf"), dir_.file("x.gguf"), GgmlType::kQ8_0, 1);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("nope.gguf"), std::string::npos);
}

TEST(QuantizeModel, KeepsShortConvolutionKernelsAsTheyAre) {
  testing::TempDir dir;
  RandomModelSpec s = *random_model_preset("tiny", Arch::kQwen35);
  s.num_layers = 2;
  s.vocab_size = 600;
  ASSERT_TRUE(make_random_model(s, dir.file("f32.gguf")).ok());
  ASSERT_TRUE(quantize_model(dir.file("f32.gguf"), dir.file("q8.gguf"), GgmlType::kQ8_0, 2).ok());
  auto in = GgufFile::open(dir.file("f32.gguf"));
  auto out = GgufFile::open(dir.file("q8.gguf"));
  ASSERT_TRUE(in.ok() && out.ok());
  EXPECT_EQ(out->find_tensor("blk.0.ssm_conv1d.weight")->type, GgmlType::kF32);
  EXPECT_EQ(dequantize(*in, "blk.0.ssm_conv1d.weight"), dequantize(*out, "blk.0.ssm_conv1d.weight"));
  EXPECT_EQ(out->find_tensor("blk.0.attn_qkv.weight")->type, GgmlType::kQ8_0);
  EXPECT_EQ(out->find_tensor("blk.0.ssm_alpha.weight")->type, GgmlType::kQ8_0);
  EXPECT_EQ(out->find_tensor("blk.0.ssm_a")->type, GgmlType::kF32);
}

}  // namespace
}  // namespace met
