// Tests for Model loading and binding (src/model/model.h).
#include "model/model.h"

#include <gtest/gtest.h>

#include <optional>

#include "gguf/gguf_writer.h"
#include "model/random_model.h"
#include "testing/memory_map.h"
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

// Every matrix a decode step streams, a MoE layer's ~small experts included,
// lies in memory advised for huge pages (huge_page_memory.h), packed
// layouts and kept rows alike.
TEST(Model, PackedWeightsLieInMemoryAdvisedForHugePages) {
  testing::TempDir dir;
  RandomModelSpec s;
  s.arch = Arch::kQwen3Moe;
  s.dtype = GgmlType::kQ8_0;
  s.num_layers = 2;
  s.vocab_size = 512;
  apply_moe_preset("tiny", s);
  const Status made = make_random_model(s, dir.file("m.gguf")).status();
  ASSERT_TRUE(made.ok()) << made.to_string();
  auto m = Model::load(dir.file("m.gguf"));
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  const LayerWeights& l = (*m)->weights().layers[1];
  ASSERT_EQ(l.wq.layout, cpu::preferred_layout(GgmlType::kQ8_0));
  ASSERT_FALSE(l.moe.down.empty());
  for (const cpu::WeightMatrix* w : {&l.wq, &l.wo, &l.moe.gate.front(), &l.moe.down.back()}) {
    const std::optional<bool> advised = testing::advised_for_huge_pages(w->data);
    if (!advised) GTEST_SKIP() << "/proc/self/smaps is not readable here";
    EXPECT_TRUE(*advised) << testing::vm_flags_of(w->data).value_or("?");
  }
}

// What a step reads in place from the file's mapping (the token embedding
// table: the rows of each step's tokens) is in memory when the load returns,
// read at load time from a cold file rather than page by page on requests'
// paths (loaded cold, a 516 MiB qwen35 file held 32% of its table's pages).
// llama.cpp prefetches its mapping likewise.
TEST(Model, WhatStepsReadInPlaceIsInMemoryAfterALoadFromAColdFile) {
  testing::TempDir dir;
  RandomModelSpec s;
  s.num_layers = 1;
  s.embedding_length = 256;
  s.num_heads = 2;
  s.num_kv_heads = 1;
  s.feed_forward_length = 256;
  s.vocab_size = 65536;
  s.dtype = GgmlType::kQ8_0;
  const std::string path = dir.file("m.gguf");
  ASSERT_TRUE(make_random_model(s, path).ok());
  const std::optional<double> cold = testing::drop_cached_pages(path);
  if (!cold || *cold > 0.25) GTEST_SKIP() << "this file system keeps the file's pages in memory";
  auto m = Model::load(path);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  const cpu::WeightMatrix& table = (*m)->weights().token_embd;
  const std::optional<double> share =
      testing::resident_share(table.data, static_cast<size_t>(table.rows) * table.row_bytes);
  ASSERT_TRUE(share.has_value());
  EXPECT_EQ(*share, 1.0);
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
