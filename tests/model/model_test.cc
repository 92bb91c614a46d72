// Tests for Model loading and binding (src/model/model.h).
#include "model/model.h"

#include <gtest/gtest.h>

#include "gguf/gguf_writer.h"
#include "model/random_model.h"
#include "testing/shared_data.h"
#include "testing/temp_dir.h"

namespace met {
namespace {

TEST(Model, BindsStories260K) {
  MET_REQUIRE_SHARED(path, "models/stories260K.gguf");
  auto m = Model::load(path);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ((*m)->arch(), Arch::kLlama);
  EXPECT_EQ((*m)->weights().layers.size(), 5u);
  EXPECT_FALSE((*m)->weights().tied_output);
  EXPECT_EQ((*m)->weights().token_embd.rows, 512);
  EXPECT_EQ((*m)->weights().layers[0].wk.rows, 32);  // 4 kv heads x 8
}

TEST(Model, TiedOutputReusesTheEmbedding) {
  testing::TempDir dir;
  RandomModelSpec s;
  s.num_layers = 1;
  s.vocab_size = 512;
  s.tied_output = true;
  ASSERT_TRUE(make_random_model(s, dir.file("m.gguf")).ok());
  auto m = Model::load(dir.file("m.gguf"));
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_TRUE((*m)->weights().tied_output);
  EXPECT_EQ((*m)->weights().output.data, (*m)->weights().token_embd.data);
}

TEST(Model, Qwen3BindsItsQkNormsAndNeoxRope) {
  testing::TempDir dir;
  RandomModelSpec s;
  s.arch = Arch::kQwen3;
  s.num_layers = 1;
  s.vocab_size = 512;
  ASSERT_TRUE(make_random_model(s, dir.file("m.gguf")).ok());
  auto m = Model::load(dir.file("m.gguf"));
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_NE((*m)->weights().layers[0].q_norm, nullptr);
  EXPECT_EQ((*m)->rope_params().layout, cpu::RopeLayout::kNeox);
}

TEST(Model, UnsupportedArchitectureIsNamed) {
  MET_REQUIRE_SHARED(path, "tokenizer-vectors/ggml-vocab-falcon.gguf");
  auto m = Model::load(path);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("falcon"), std::string::npos) << m.status().message();
}

TEST(Model, MissingTensorIsNamed) {
  testing::TempDir dir;
  RandomModelSpec s;
  s.num_layers = 1;
  s.vocab_size = 512;
  ASSERT_TRUE(make_random_model(s, dir.file("m.gguf")).ok());
  auto full = GgufFile::open(dir.file("m.gguf"));
  ASSERT_TRUE(full.ok());
  GgufWriter w;
  for (const auto& [k, v] : full->metadata().entries()) w.set(k, v);
  for (const auto& t : full->tensors()) {
    if (t.name == "blk.0.ffn_up.weight") continue;
    auto bytes = full->tensor_data(t);
    ASSERT_TRUE(w.add_tensor_bytes(t.name, t.shape, t.type, {bytes.begin(), bytes.end()}).ok());
  }
  ASSERT_TRUE(w.write_file(dir.file("cut.gguf")).ok());
  auto m = Model::load(dir.file("cut.gguf"));
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("blk.0.ffn_up.weight"), std::string::npos) << m.status().message();
}

}  // namespace
}  // namespace met
