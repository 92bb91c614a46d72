// Tests for the dense transformers beyond llama's shape (gemma2, gemma3,
// gemma4, granite, smollm3, olmo2, phi3): the hyper-parameters read_hparams derives from their
// llama.cpp keys, the tensors arch_tensors lists, and what Model binds. Their
// logits against the reference forward are in cpu_device_test.cc; against
// llama.cpp, bench/peer/crosscheck.sh (see bench/peer/README.md).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "model/arch.h"
#include "model/hparams.h"
#include "model/model.h"
#include "model/random_model.h"
#include "testing/model_test_support.h"
#include "testing/temp_dir.h"

namespace met {
namespace {

GgufMetadata dense_metadata(const std::string& arch, uint32_t layers = 4) {
  GgufMetadata md;
  auto key = [&arch](std::string_view suffix) { return arch + "." + std::string(suffix); };
  md.set("general.architecture", arch);
  md.set(key("block_count"), layers);
  md.set(key("embedding_length"), uint32_t{1152});
  md.set(key("feed_forward_length"), uint32_t{6912});
  md.set(key("attention.head_count"), uint32_t{4});
  md.set(key("attention.head_count_kv"), uint32_t{1});
  md.set(key("attention.key_length"), uint32_t{256});
  md.set(key("attention.value_length"), uint32_t{256});
  md.set(key("rope.freq_base"), 1000000.0f);
  return md;
}

TEST(DenseArchHParams, Gemma3ScalesEmbeddingsAndQueriesAndWindowsWhereTheFileSays) {
  GgufMetadata md = dense_metadata("gemma3");
  md.set("gemma3.attention.sliding_window", uint32_t{512});
  auto hp = read_hparams(md);
  ASSERT_TRUE(hp.ok()) << hp.status().to_string();
  EXPECT_FLOAT_EQ(hp->embedding_scale, std::sqrt(1152.0f));
  EXPECT_FLOAT_EQ(hp->attention_scale, 1.0f / 16.0f);  // 1 / sqrt(head_dim 256), not of 1152 / 4
  EXPECT_EQ(hp->sliding_window, 512u);
  EXPECT_EQ(hp->swa_pattern, 6u);                     // llama.cpp's default: 5 windowed layers in 6
  EXPECT_FLOAT_EQ(hp->rope_freq_base_swa, 10000.0f);  // Gemma 3's local base
  EXPECT_TRUE(hp->swa_rope_unscaled);
  EXPECT_TRUE(hp->layer_is_swa(4));
  EXPECT_FALSE(hp->layer_is_swa(5));
  EXPECT_FLOAT_EQ(hp->final_logit_softcap, 0.0f);
}

TEST(DenseArchHParams, Gemma3ReadsItsKeysOverTheDefaults) {
  GgufMetadata md = dense_metadata("gemma3", 62);
  md.set("gemma3.attention.sliding_window", uint32_t{1024});
  md.set("gemma3.attention.sliding_window_pattern", uint32_t{3});
  md.set("gemma3.rope.freq_base_swa", 20000.0f);
  md.set("gemma3.final_logit_softcapping", 30.0f);
  auto hp = read_hparams(md);
  ASSERT_TRUE(hp.ok()) << hp.status().to_string();
  EXPECT_EQ(hp->swa_pattern, 3u);
  EXPECT_FLOAT_EQ(hp->rope_freq_base_swa, 20000.0f);
  EXPECT_FLOAT_EQ(hp->final_logit_softcap, 30.0f);
  // The 62-layer Gemma 3 27B scales queries by 1 / sqrt(embd / heads).
  EXPECT_FLOAT_EQ(hp->attention_scale, 1.0f / std::sqrt(1152.0f / 4.0f));
}

TEST(DenseArchHParams, Gemma2WindowsEveryOtherLayerAndSoftCapsByDefault) {
  auto hp = read_hparams(dense_metadata("gemma2"));
  ASSERT_TRUE(hp.ok()) << hp.status().to_string();
  EXPECT_EQ(hp->sliding_window, 4096u);
  EXPECT_TRUE(hp->layer_is_swa(0));
  EXPECT_FALSE(hp->layer_is_swa(1));
  EXPECT_FLOAT_EQ(hp->rope_freq_base_swa, 1000000.0f);
  EXPECT_FALSE(hp->swa_rope_unscaled);
  EXPECT_FLOAT_EQ(hp->attn_logit_softcap, 50.0f);
  EXPECT_FLOAT_EQ(hp->final_logit_softcap, 30.0f);
  EXPECT_FLOAT_EQ(hp->embedding_scale, std::sqrt(1152.0f));
  GgufMetadata md = dense_metadata("gemma2", 46);  // the 27B
  md.set("gemma2.attention.sliding_window", uint32_t{128});
  md.set("gemma2.attn_logit_softcapping", 20.0f);
  auto big = read_hparams(md);
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->sliding_window, 128u);
  EXPECT_FLOAT_EQ(big->attn_logit_softcap, 20.0f);
  EXPECT_FLOAT_EQ(big->attention_scale, 1.0f / std::sqrt(1152.0f / 4.0f));
  md.set("gemma2.final_logit_softcapping", -1.0f);
  EXPECT_FALSE(read_hparams(md).ok());
}

TEST(DenseArchHParams, Gemma3AndOlmo2WithoutAWindowHaveNoWindowedLayers) {
  for (const char* arch : {"gemma3", "olmo2"}) {
    auto hp = read_hparams(dense_metadata(arch));
    ASSERT_TRUE(hp.ok()) << arch;
    EXPECT_EQ(hp->sliding_window, 0u) << arch;
    EXPECT_FALSE(hp->layer_is_swa(0)) << arch;
  }
}

TEST(DenseArchHParams, Olmo2WindowsThreeLayersInFourWithTheGlobalRopeBase) {
  GgufMetadata md = dense_metadata("olmo2");
  md.set("olmo2.attention.sliding_window", uint32_t{4096});
  auto hp = read_hparams(md);
  ASSERT_TRUE(hp.ok());
  EXPECT_EQ(hp->swa_pattern, 4u);
  EXPECT_FLOAT_EQ(hp->rope_freq_base_swa, 1000000.0f);
  EXPECT_TRUE(hp->layer_is_swa(2));
  EXPECT_FALSE(hp->layer_is_swa(3));
}

TEST(DenseArchHParams, Smollm3LeavesRopeOutOfEveryFourthLayer) {
  auto hp = read_hparams(dense_metadata("smollm3", 8));
  ASSERT_TRUE(hp.ok());
  for (uint32_t i = 0; i < 8; ++i) EXPECT_EQ(hp->layer_uses_rope(i), (i + 1) % 4 != 0) << i;
  auto llama = read_hparams(dense_metadata("llama", 8));
  ASSERT_TRUE(llama.ok());
  EXPECT_TRUE(llama->layer_uses_rope(3));
}

TEST(DenseArchHParams, GraniteReadsItsFourScales) {
  GgufMetadata md = dense_metadata("granite");
  md.set("granite.embedding_scale", 12.0f);
  md.set("granite.residual_scale", 0.22f);
  md.set("granite.attention.scale", 0.0078125f);
  md.set("granite.logit_scale", 8.0f);
  auto hp = read_hparams(md);
  ASSERT_TRUE(hp.ok());
  EXPECT_FLOAT_EQ(hp->embedding_scale, 12.0f);
  EXPECT_FLOAT_EQ(hp->residual_scale, 0.22f);
  EXPECT_FLOAT_EQ(hp->attention_scale, 0.0078125f);
  EXPECT_FLOAT_EQ(hp->logit_scale, 8.0f);
  EXPECT_TRUE(hp->uses_rope);
}

std::map<std::string, std::vector<uint64_t>> tensor_shapes(Arch arch, const ModelHParams& hp) {
  std::map<std::string, std::vector<uint64_t>> out;
  for (const TensorSpec& t : arch_tensors(arch, hp, true)) out[t.name] = t.shape;
  return out;
}

TEST(DenseArchTensors, Gemma3HasPerHeadQkNormsAndPostNormsAroundBothBlocks) {
  auto hp = read_hparams(dense_metadata("gemma3", 1));
  ASSERT_TRUE(hp.ok());
  const auto t = tensor_shapes(Arch::kGemma3, *hp);
  EXPECT_EQ(t.at("blk.0.attn_q_norm.weight"), std::vector<uint64_t>{256});
  EXPECT_EQ(t.at("blk.0.attn_k_norm.weight"), std::vector<uint64_t>{256});
  for (const char* norm : {"attn_norm", "post_attention_norm", "ffn_norm", "post_ffw_norm"}) {
    EXPECT_EQ(t.at(std::string("blk.0.") + norm + ".weight"), std::vector<uint64_t>{1152}) << norm;
  }
}

TEST(DenseArchTensors, Olmo2HasPostNormsOnlyAndNormsWholeQAndK) {
  auto hp = read_hparams(dense_metadata("olmo2", 1));
  ASSERT_TRUE(hp.ok());
  const auto t = tensor_shapes(Arch::kOlmo2, *hp);
  EXPECT_EQ(t.count("blk.0.attn_norm.weight"), 0u);
  EXPECT_EQ(t.count("blk.0.ffn_norm.weight"), 0u);
  EXPECT_EQ(t.at("blk.0.attn_q_norm.weight"), std::vector<uint64_t>{1024});  // 4 heads of 256
  EXPECT_EQ(t.at("blk.0.attn_k_norm.weight"), std::vector<uint64_t>{256});   // 1 KV head
  EXPECT_EQ(t.count("blk.0.post_attention_norm.weight"), 1u);
  EXPECT_EQ(t.count("blk.0.post_ffw_norm.weight"), 1u);
}

TEST(DenseArchModel, BindsEachArchsNormsAsItsGraphReadsThem) {
  testing::TempDir dir;
  for (Arch arch : {Arch::kGemma2, Arch::kGemma3, Arch::kOlmo2, Arch::kGranite, Arch::kSmollm3}) {
    RandomModelSpec s = *random_model_preset("tiny", arch);
    s.num_layers = 2, s.embedding_length = 128, s.feed_forward_length = 256, s.vocab_size = 600;
    const std::string path = dir.file(std::string(arch_name(arch)) + ".gguf");
    ASSERT_TRUE(make_random_model(s, path).ok()) << arch_name(arch);
    auto m = Model::load(path);
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    EXPECT_EQ((*m)->arch(), arch);
    const LayerWeights& l = (*m)->weights().layers[0];
    const bool sandwich = arch == Arch::kGemma2 || arch == Arch::kGemma3 || arch == Arch::kOlmo2;
    EXPECT_EQ(l.attn_post_norm != nullptr, sandwich) << arch_name(arch);
    EXPECT_EQ(l.ffn_post_norm != nullptr, sandwich) << arch_name(arch);
    EXPECT_EQ(l.attn_norm == nullptr, arch == Arch::kOlmo2) << arch_name(arch);
    EXPECT_EQ(l.ffn_norm == nullptr, arch == Arch::kOlmo2) << arch_name(arch);
    EXPECT_TRUE(l.has_ffn);
  }
}

TEST(DenseArchModel, Phi3TakesItsLongRopeFactorsWhereItsContextIsPastTheOriginal) {
  testing::TempDir dir;
  RandomModelSpec s = *random_model_preset("tiny", Arch::kPhi3);
  s.num_layers = 1, s.embedding_length = 128, s.feed_forward_length = 256, s.vocab_size = 600;
  s.context_length = 2048, s.longrope = true;
  const auto last_factor = [&](uint32_t original) {
    s.longrope_original_context = original;
    const std::string path = dir.file("phi3-" + std::to_string(original) + ".gguf");
    EXPECT_TRUE(make_random_model(s, path).ok());
    auto m = Model::load(path);
    EXPECT_TRUE(m.ok()) << m.status().to_string();
    const float* f = (*m)->weights().rope_freqs;
    EXPECT_NE(f, nullptr);
    EXPECT_FLOAT_EQ((*m)->rope_params().attn_factor, (*m)->hparams().rope_scaling.attn_factor);
    return f[(*m)->hparams().rope_dims / 2 - 1];
  };
  EXPECT_FLOAT_EQ(last_factor(512), 4.0f);   // longrope_factors: long ones rise to 4
  EXPECT_FLOAT_EQ(last_factor(2048), 1.2f);  // short ones to 1.2
}

TEST(DenseArchModel, AMatrixOfATypeMetCannotRunIsRefusedNamingTensorAndType) {
  testing::TempDir dir;
  RandomModelSpec s = *random_model_preset("tiny", Arch::kLlama);
  s.num_layers = 1, s.embedding_length = 256, s.feed_forward_length = 256, s.vocab_size = 600;
  ASSERT_TRUE(make_random_model(s, dir.file("llama.gguf")).ok());
  testing::rewrite_gguf(dir.file("llama.gguf"), dir.file("iq2.gguf"), "", "blk.0.attn_q.weight", {256, 256},
                        GgmlType::kIQ2_XXS);
  auto m = Model::load(dir.file("iq2.gguf"));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(m.status().message().find("blk.0.attn_q.weight"), std::string::npos) << m.status().to_string();
  EXPECT_NE(m.status().message().find("iq2_xxs"), std::string::npos) << m.status().to_string();
}

TEST(DenseArchModel, AFileWithoutAPostNormIsRefusedNamingIt) {
  testing::TempDir dir;
  RandomModelSpec s = *random_model_preset("tiny", Arch::kGemma3);
  s.num_layers = 1, s.embedding_length = 128, s.feed_forward_length = 256, s.vocab_size = 600;
  ASSERT_TRUE(make_random_model(s, dir.file("gemma3.gguf")).ok());
  testing::rewrite_gguf(dir.file("gemma3.gguf"), dir.file("cut.gguf"), "blk.0.post_ffw_norm.weight");
  auto m = Model::load(dir.file("cut.gguf"));
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("blk.0.post_ffw_norm.weight"), std::string::npos) << m.status().to_string();
}


// gemma4: what llama.cpp's converter writes for an E2B-like model, cut to 6 layers.
GgufMetadata gemma4_metadata(uint32_t shared_kv_layers = 3) {
  GgufMetadata md = dense_metadata("gemma4", 6);
  md.set("gemma4.attention.key_length", uint32_t{512});
  md.set("gemma4.attention.value_length", uint32_t{512});
  md.set("gemma4.attention.key_length_swa", uint32_t{256});
  md.set("gemma4.attention.value_length_swa", uint32_t{256});
  md.set("gemma4.rope.dimension_count", uint32_t{512});
  md.set("gemma4.rope.dimension_count_swa", uint32_t{256});
  md.set("gemma4.attention.sliding_window", uint32_t{512});
  md.set("gemma4.attention.sliding_window_pattern",
         GgufValue(GgufArray{GgufType::kBool, std::vector<bool>{true, true, false, true, true, false}}));
  md.set("gemma4.attention.head_count_kv", GgufValue::array(std::vector<uint32_t>{2, 2, 1, 2, 2, 1}));
  md.set("gemma4.feed_forward_length", GgufValue::array(std::vector<uint32_t>{6144, 6144, 6144, 12288, 12288, 12288}));
  md.set("gemma4.attention.shared_kv_layers", shared_kv_layers);
  md.set("gemma4.embedding_length_per_layer_input", uint32_t{256});
  md.set("gemma4.final_logit_softcapping", 30.0f);
  return md;
}

TEST(DenseArchHParams, Gemma4ReadsEachLayersHeadsWidthsWindowAndKvSource) {
  auto hp = read_hparams(gemma4_metadata());
  ASSERT_TRUE(hp.ok()) << hp.status().to_string();
  EXPECT_EQ(hp->head_dim, 512u);  // the widest layer's: the KV cache's rows
  EXPECT_EQ(hp->num_kv_heads, 2u);
  EXPECT_EQ(hp->feed_forward_length, 12288u);
  EXPECT_EQ(hp->layer_head_dim(0), 256u);
  EXPECT_EQ(hp->layer_head_dim(2), 512u);
  EXPECT_EQ(hp->layer_kv_heads(2), 1u);
  EXPECT_EQ(hp->layer_rope_dims(1), 256u);
  EXPECT_EQ(hp->layer_rope_dims(5), 512u);
  EXPECT_EQ(hp->layer_ffn_length(4), 12288u);
  EXPECT_TRUE(hp->layer_is_swa(3));
  EXPECT_FALSE(hp->layer_is_swa(5));
  EXPECT_EQ(hp->layer_window(0), 512u);
  EXPECT_TRUE(hp->layer_has_kv(2));
  EXPECT_FALSE(hp->layer_has_kv(3));
  EXPECT_EQ(hp->kv_source_layer(1), 1u);
  EXPECT_EQ(hp->kv_source_layer(4), 1u);  // windowed: layer 6 - 3 - 2
  EXPECT_EQ(hp->kv_source_layer(5), 2u);  // global: layer 6 - 3 - 1
  EXPECT_FLOAT_EQ(hp->attention_scale, 1.0f);
  EXPECT_FLOAT_EQ(hp->embedding_scale, std::sqrt(1152.0f));
  EXPECT_FLOAT_EQ(hp->final_logit_softcap, 30.0f);
  EXPECT_FLOAT_EQ(hp->rope_freq_base_swa, 10000.0f);
  EXPECT_EQ(hp->embedding_length_per_layer, 256u);
}

TEST(DenseArchHParams, Gemma4RefusesSharedKvLayersThatWouldReadALayerOfTheOtherKind) {
  for (const uint32_t shared : {1u, 2u}) {  // 1: layer 5 (global) would read layer 4; 2: layer 4 layer 2
    auto bad = read_hparams(gemma4_metadata(shared));
    ASSERT_FALSE(bad.ok()) << shared;
    EXPECT_NE(bad.status().message().find("shared_kv_layers"), std::string::npos) << bad.status().to_string();
  }
  auto bad = read_hparams(gemma4_metadata(5));  // one layer left with KV
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("shared_kv_layers"), std::string::npos) << bad.status().to_string();
}

TEST(DenseArchTensors, Gemma4ListsEachLayerAtItsSizesAndNoKvForSharedLayers) {
  auto hp = read_hparams(gemma4_metadata());
  ASSERT_TRUE(hp.ok());
  hp->vocab_size = 1000;
  const auto t = tensor_shapes(Arch::kGemma4, *hp);
  EXPECT_EQ(t.at("blk.0.attn_q.weight"), (std::vector<uint64_t>{1152, 1024}));  // 4 heads of 256
  EXPECT_EQ(t.at("blk.2.attn_q.weight"), (std::vector<uint64_t>{1152, 2048}));  // 4 heads of 512
  EXPECT_EQ(t.at("blk.2.attn_k.weight"), (std::vector<uint64_t>{1152, 512}));   // 1 KV head
  EXPECT_EQ(t.count("blk.2.attn_v.weight"), 0u);  // global: K serves as V
  EXPECT_EQ(t.at("blk.0.attn_v.weight"), (std::vector<uint64_t>{1152, 512}));
  EXPECT_EQ(t.count("blk.3.attn_k.weight"), 0u);
  EXPECT_EQ(t.count("blk.3.attn_k_norm.weight"), 0u);
  EXPECT_EQ(t.at("blk.4.ffn_up.weight"), (std::vector<uint64_t>{1152, 12288}));
  EXPECT_EQ(t.at("blk.3.attn_q_norm.weight"), std::vector<uint64_t>{256});
  EXPECT_EQ(t.at("blk.5.attn_output.weight"), (std::vector<uint64_t>{2048, 1152}));
  EXPECT_EQ(t.at("blk.1.layer_output_scale.weight"), std::vector<uint64_t>{1});
  EXPECT_EQ(t.at("per_layer_token_embd.weight"), (std::vector<uint64_t>{6 * 256, 1000}));
  EXPECT_EQ(t.at("per_layer_model_proj.weight"), (std::vector<uint64_t>{1152, 6 * 256}));
  EXPECT_EQ(t.at("blk.5.inp_gate.weight"), (std::vector<uint64_t>{1152, 256}));
  EXPECT_EQ(t.at("blk.5.proj.weight"), (std::vector<uint64_t>{256, 1152}));
  EXPECT_EQ(t.at("blk.5.post_norm.weight"), std::vector<uint64_t>{1152});
}

TEST(DenseArchModel, Gemma4BindsSharedKvLayersWithoutKvAndGlobalLayersWithoutV) {
  testing::TempDir dir;
  RandomModelSpec s = *random_model_preset("tiny", Arch::kGemma4);
  s.vocab_size = 600;
  ASSERT_TRUE(make_random_model(s, dir.file("gemma4.gguf")).ok());
  auto m = Model::load(dir.file("gemma4.gguf"));
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ((*m)->arch(), Arch::kGemma4);
  const ModelWeights& w = (*m)->weights();
  ASSERT_EQ(w.layers.size(), 8u);  // layers 3 and 7 global; 4..7 share KV
  EXPECT_NE(w.layers[0].wv.data, nullptr);
  EXPECT_EQ(w.layers[3].wv.data, nullptr);
  EXPECT_NE(w.layers[3].wk.data, nullptr);
  EXPECT_FALSE(w.layers[3].kv_from.has_value());
  EXPECT_EQ(w.layers[5].kv_from, std::optional<uint32_t>(2));
  EXPECT_EQ(w.layers[7].kv_from, std::optional<uint32_t>(3));
  EXPECT_EQ(w.layers[7].wk.data, nullptr);
  ASSERT_NE(w.layers[1].out_scale, nullptr);
  EXPECT_FLOAT_EQ(*w.layers[1].out_scale, 0.75f);
  EXPECT_EQ(w.layers[0].wq.rows, 8 * 32);  // windowed heads of 32
  EXPECT_EQ(w.layers[3].wq.rows, 8 * 64);  // global heads of 64
  EXPECT_EQ(w.layers[2].pe_gate.rows, 64);
  EXPECT_EQ(w.per_layer_model_proj.rows, 8 * 64);
  EXPECT_NE(w.per_layer_proj_norm, nullptr);
  ASSERT_NE(w.rope_freqs, nullptr);  // proportional rope: a quarter of the 32 pairs rotate
  EXPECT_FLOAT_EQ(w.rope_freqs[7], 1.0f);
  EXPECT_GT(w.rope_freqs[8], 1e29f);
}

// llama.cpp reads rope_freqs.weight from the global layers and refuses a file
// with a tensor it does not read, so a gemma4 without global layers has none.
TEST(DenseArchModel, AGemma4WithEveryLayerWindowedIsMadeWithoutRopeFreqs) {
  testing::TempDir dir;
  RandomModelSpec s = *random_model_preset("tiny", Arch::kGemma4);
  s.vocab_size = 600;
  s.swa_pattern = 0;
  ASSERT_TRUE(make_random_model(s, dir.file("gemma4.gguf")).ok());
  auto m = Model::load(dir.file("gemma4.gguf"));
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ((*m)->weights().rope_freqs, nullptr);
}

// llama.cpp's gemma4 KV cache asserts that some layer is windowed.
TEST(DenseArchModel, AGemma4WithNoWindowedLayerIsRefused) {
  testing::TempDir dir;
  RandomModelSpec s = *random_model_preset("tiny", Arch::kGemma4);
  s.swa_pattern = 1;
  auto made = make_random_model(s, dir.file("gemma4.gguf"));
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.status().message().find("no windowed layer"), std::string::npos) << made.status().to_string();
}

TEST(DenseArchModel, AGemma4WithExpertsIsRefusedNamingIt) {
  testing::TempDir dir;
  RandomModelSpec s = *random_model_preset("tiny", Arch::kGemma4);
  s.vocab_size = 600;
  ASSERT_TRUE(make_random_model(s, dir.file("gemma4.gguf")).ok());
  testing::rewrite_gguf_metadata(dir.file("gemma4.gguf"), dir.file("e.gguf"), "gemma4.expert_count",
                                  GgufValue(uint32_t{128}));
  testing::rewrite_gguf_metadata(dir.file("e.gguf"), dir.file("moe.gguf"), "gemma4.expert_used_count",
                                  GgufValue(uint32_t{8}));
  auto m = Model::load(dir.file("moe.gguf"));
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("gemma4 with experts"), std::string::npos) << m.status().to_string();
}

}  // namespace
}  // namespace met
