// Tests for read_hparams (src/model/hparams.h).
#include "model/hparams.h"

#include <gtest/gtest.h>

#include "gguf/gguf_file.h"
#include "testing/shared_data.h"

namespace met {
namespace {

GgufMetadata llama_metadata() {
  GgufMetadata md;
  md.set("general.architecture", std::string("llama"));
  md.set("llama.block_count", uint32_t{4});
  md.set("llama.embedding_length", uint32_t{128});
  md.set("llama.feed_forward_length", uint32_t{256});
  md.set("llama.attention.head_count", uint32_t{8});
  md.set("llama.attention.head_count_kv", uint32_t{2});
  md.set("llama.context_length", uint32_t{1024});
  return md;
}

TEST(ReadHParams, ReadsTheArchitectureKeys) {
  auto hp = read_hparams(llama_metadata());
  ASSERT_TRUE(hp.ok()) << hp.status().to_string();
  EXPECT_EQ(hp->arch, "llama");
  EXPECT_EQ(hp->num_layers, 4u);
  EXPECT_EQ(hp->embedding_length, 128u);
  EXPECT_EQ(hp->feed_forward_length, 256u);
  EXPECT_EQ(hp->num_heads, 8u);
  EXPECT_EQ(hp->num_kv_heads, 2u);
  EXPECT_EQ(hp->context_length, 1024u);
}

TEST(ReadHParams, DefaultsFollowLlamaCpp) {
  auto hp = read_hparams(llama_metadata());
  ASSERT_TRUE(hp.ok());
  EXPECT_EQ(hp->head_dim, 16u);   // embedding / heads
  EXPECT_EQ(hp->rope_dims, 16u);  // the whole head
  EXPECT_FLOAT_EQ(hp->rope_freq_base, 10000.0f);
  EXPECT_FLOAT_EQ(hp->rms_norm_eps, 1e-5f);
  EXPECT_EQ(hp->rope_scaling.kind, RopeScalingKind::kNone);
}

TEST(ReadHParams, MissingKeyIsNamed) {
  GgufMetadata md;
  md.set("general.architecture", std::string("qwen2"));
  md.set("qwen2.embedding_length", uint32_t{64});
  auto hp = read_hparams(md);
  ASSERT_FALSE(hp.ok());
  EXPECT_EQ(hp.status().code(), StatusCode::kNotFound);
  EXPECT_NE(hp.status().message().find("qwen2.block_count"), std::string::npos);
}

TEST(ReadHParams, MistypedKeyIsNamed) {
  GgufMetadata md = llama_metadata();
  md.set("llama.block_count", std::string("four"));
  auto hp = read_hparams(md);
  ASSERT_FALSE(hp.ok());
  EXPECT_NE(hp.status().message().find("llama.block_count"), std::string::npos);
}

TEST(ReadHParams, KvHeadsMustDivideHeads) {
  GgufMetadata md = llama_metadata();
  md.set("llama.attention.head_count_kv", uint32_t{3});
  auto hp = read_hparams(md);
  ASSERT_FALSE(hp.ok());
  EXPECT_NE(hp.status().message().find("head_count_kv 3"), std::string::npos);
}

TEST(ReadHParams, ReadsYarnScaling) {
  GgufMetadata md = llama_metadata();
  md.set("llama.rope.scaling.type", std::string("yarn"));
  md.set("llama.rope.scaling.factor", 4.0f);
  md.set("llama.rope.scaling.original_context_length", uint32_t{256});
  auto hp = read_hparams(md);
  ASSERT_TRUE(hp.ok());
  EXPECT_EQ(hp->rope_scaling.kind, RopeScalingKind::kYarn);
  EXPECT_FLOAT_EQ(hp->rope_scaling.factor, 4.0f);
  EXPECT_EQ(hp->rope_scaling.original_context_length, 256u);
}

TEST(ReadHParams, UnknownRopeScalingIsUnimplemented) {
  GgufMetadata md = llama_metadata();
  md.set("llama.rope.scaling.type", std::string("longrope"));
  auto hp = read_hparams(md);
  ASSERT_FALSE(hp.ok());
  EXPECT_EQ(hp.status().code(), StatusCode::kUnimplemented);
}

TEST(ReadHParams, Stories260KHasTheDocumentedShape) {
  MET_REQUIRE_SHARED(path, "models/stories260K.gguf");
  auto file = GgufFile::open(path);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  auto hp = read_hparams(file->metadata());
  ASSERT_TRUE(hp.ok()) << hp.status().to_string();
  EXPECT_EQ(hp->num_layers, 5u);
  EXPECT_EQ(hp->embedding_length, 64u);
  EXPECT_EQ(hp->num_heads, 8u);
  EXPECT_EQ(hp->num_kv_heads, 4u);
  EXPECT_EQ(hp->feed_forward_length, 172u);
  EXPECT_EQ(hp->vocab_size, 512u);
  EXPECT_EQ(hp->head_dim, 8u);
  EXPECT_EQ(hp->rope_dims, 8u);
}

// A qwen35 with 8 trunk layers and one MTP block, as make-model writes it.
GgufMetadata qwen35_metadata() {
  GgufMetadata md;
  md.set("general.architecture", std::string("qwen35"));
  md.set("qwen35.block_count", uint32_t{9});
  md.set("qwen35.nextn_predict_layers", uint32_t{1});
  md.set("qwen35.embedding_length", uint32_t{256});
  md.set("qwen35.feed_forward_length", uint32_t{768});
  md.set("qwen35.attention.head_count", uint32_t{4});
  md.set("qwen35.attention.head_count_kv", uint32_t{2});
  md.set("qwen35.attention.key_length", uint32_t{64});
  md.set("qwen35.rope.dimension_count", uint32_t{16});
  md.set("qwen35.rope.dimension_sections", GgufValue::array(std::vector<int32_t>{3, 3, 2, 0}));
  md.set("qwen35.ssm.conv_kernel", uint32_t{4});
  md.set("qwen35.ssm.inner_size", uint32_t{256});
  md.set("qwen35.ssm.state_size", uint32_t{64});
  md.set("qwen35.ssm.time_step_rank", uint32_t{4});
  md.set("qwen35.ssm.group_count", uint32_t{2});
  return md;
}

std::string error_of(const GgufMetadata& md) {
  auto hp = read_hparams(md);
  return hp.ok() ? std::string("(ok)") : hp.status().message();
}

TEST(ReadHParamsQwen35, ReadsTheGatedDeltaKeysAndTakesTheMtpBlocksOffTheTrunk) {
  auto hp = read_hparams(qwen35_metadata());
  ASSERT_TRUE(hp.ok()) << hp.status().to_string();
  EXPECT_EQ(hp->num_layers, 8u);
  EXPECT_EQ(hp->nextn_predict_layers, 1u);
  EXPECT_EQ(hp->ssm_conv_kernel, 4u);
  EXPECT_EQ(hp->ssm_state_size, 64u);
  EXPECT_EQ(hp->ssm_group_count, 2u);
  EXPECT_EQ(hp->ssm_time_step_rank, 4u);
  EXPECT_EQ(hp->rope_sections, (std::array<uint32_t, 4>{3, 3, 2, 0}));
  EXPECT_EQ(hp->conv_dim(), 2u * 2 * 64 + 256);
  EXPECT_EQ(hp->conv_state_floats(), 3u * 512);
  EXPECT_EQ(hp->ssm_state_floats(), 4u * 64 * 64);
  // Six recurrent layers (the interval defaults to 4), float32.
  EXPECT_EQ(hp->recurrent_state_bytes(), 6u * (3 * 512 + 4 * 64 * 64) * 4);
}

TEST(ReadHParamsQwen35, EveryFourthLayerIsAttentionByDefault) {
  auto hp = read_hparams(qwen35_metadata());
  ASSERT_TRUE(hp.ok());
  EXPECT_EQ(hp->full_attention_interval, 4u);
  for (uint32_t i = 0; i < 8; ++i) EXPECT_EQ(hp->layer_is_recurrent(i), i != 3 && i != 7) << i;
  EXPECT_FALSE(hp->layer_is_recurrent(8));  // the MTP block
  EXPECT_EQ(hp->num_recurrent_layers(), 6u);
  EXPECT_TRUE(hp->is_hybrid());
}

TEST(ReadHParamsQwen35, FullAttentionIntervalSetsThePattern) {
  GgufMetadata md = qwen35_metadata();
  md.set("qwen35.full_attention_interval", uint32_t{2});
  auto hp = read_hparams(md);
  ASSERT_TRUE(hp.ok());
  for (uint32_t i = 0; i < 8; ++i) EXPECT_EQ(hp->layer_is_recurrent(i), i % 2 == 0) << i;
}

TEST(ReadHParamsQwen35, RecurrentLayersArrayWinsOverTheInterval) {
  GgufMetadata md = qwen35_metadata();
  md.set("qwen35.full_attention_interval", uint32_t{2});
  GgufArray flags{GgufType::kBool, std::vector<bool>{true, false, false, true, true, true, false, true, false}};
  md.set("qwen35.attention.recurrent_layers", flags);
  auto hp = read_hparams(md);
  ASSERT_TRUE(hp.ok()) << hp.status().to_string();
  EXPECT_EQ(hp->recurrent_layers, (std::vector<bool>{true, false, false, true, true, true, false, true}));
  md.set("qwen35.attention.recurrent_layers", GgufValue::array(std::vector<int32_t>{0, 1, 1, 1, 0, 1, 1, 1, 0}));
  hp = read_hparams(md);
  ASSERT_TRUE(hp.ok()) << hp.status().to_string();
  EXPECT_EQ(hp->recurrent_layers, (std::vector<bool>{false, true, true, true, false, true, true, true}));
}

TEST(ReadHParamsQwen35, RecurrentLayersArrayOfTheWrongLengthIsNamed) {
  GgufMetadata md = qwen35_metadata();
  md.set("qwen35.attention.recurrent_layers", GgufValue::array(std::vector<int32_t>{1, 1, 1, 0}));
  const std::string e = error_of(md);
  EXPECT_NE(e.find("qwen35.attention.recurrent_layers"), std::string::npos) << e;
  EXPECT_NE(e.find("expected block_count 9"), std::string::npos) << e;
}

TEST(ReadHParamsQwen35, MissingGatedDeltaKeysAreNamed) {
  for (const char* key : {"qwen35.ssm.conv_kernel", "qwen35.ssm.inner_size", "qwen35.ssm.state_size",
                          "qwen35.ssm.time_step_rank", "qwen35.ssm.group_count", "qwen35.rope.dimension_sections"}) {
    const GgufMetadata full = qwen35_metadata();
    GgufMetadata md;
    for (const auto& [k, v] : full.entries()) {
      if (k != key) md.set(k, v);
    }
    EXPECT_NE(error_of(md).find(key), std::string::npos) << key << ": " << error_of(md);
  }
}

TEST(ReadHParamsQwen35, BadGatedDeltaSizesAreNamed) {
  struct Case {
    const char* key;
    uint32_t value;
    const char* named;
  };
  for (const Case& c : {Case{"qwen35.ssm.inner_size", 300, "qwen35.ssm.inner_size 300"},
                        Case{"qwen35.ssm.time_step_rank", 3, "qwen35.ssm.time_step_rank 3"},
                        Case{"qwen35.ssm.group_count", 0, "qwen35.ssm.group_count is 0"},
                        Case{"qwen35.ssm.conv_kernel", 0, "qwen35.ssm.conv_kernel is 0"},
                        Case{"qwen35.full_attention_interval", 0, "qwen35.full_attention_interval is 0"},
                        Case{"qwen35.nextn_predict_layers", 9, "qwen35.nextn_predict_layers 9"}}) {
    GgufMetadata md = qwen35_metadata();
    md.set(c.key, c.value);
    EXPECT_NE(error_of(md).find(c.named), std::string::npos) << c.key << ": " << error_of(md);
  }
}

TEST(ReadHParamsQwen35, RopeSectionsThatLeaveAPairUnrotatedAreRefused) {
  GgufMetadata md = qwen35_metadata();
  md.set("qwen35.rope.dimension_sections", GgufValue::array(std::vector<int32_t>{3, 3, 1, 0}));  // pair 5: w
  auto hp = read_hparams(md);
  ASSERT_FALSE(hp.ok());
  EXPECT_EQ(hp.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(hp.status().message().find("qwen35.rope.dimension_sections [3, 3, 1, 0]"), std::string::npos)
      << hp.status().message();
  EXPECT_NE(hp.status().message().find("pair 5"), std::string::npos) << hp.status().message();
  // Qwen3.5's own [11, 11, 10, 0] rotates all 32 pairs of a 64-dim rope.
  md = qwen35_metadata();
  md.set("qwen35.attention.key_length", uint32_t{256});
  md.set("qwen35.rope.dimension_count", uint32_t{64});
  md.set("qwen35.rope.dimension_sections", GgufValue::array(std::vector<int32_t>{11, 11, 10, 0}));
  EXPECT_EQ(error_of(md), "(ok)");
  md.set("qwen35.rope.dimension_sections", GgufValue::array(std::vector<int32_t>{11, 11}));
  EXPECT_NE(error_of(md).find("has 2 entries, expected 4"), std::string::npos) << error_of(md);
}

TEST(ReadHParamsQwen35, MoeDefaultsItsSharedExpertToTheFeedForwardLength) {
  const GgufMetadata dense = qwen35_metadata();
  GgufMetadata md;
  for (const auto& [k, v] : dense.entries()) {
    std::string key = k.starts_with("qwen35.") ? "qwen35moe." + k.substr(7) : k;
    md.set(key, k == "general.architecture" ? GgufValue(std::string("qwen35moe")) : v);
  }
  md.set("qwen35moe.expert_count", uint32_t{8});
  md.set("qwen35moe.expert_used_count", uint32_t{2});
  md.set("qwen35moe.expert_feed_forward_length", uint32_t{192});
  auto hp = read_hparams(md);
  ASSERT_TRUE(hp.ok()) << hp.status().to_string();
  EXPECT_EQ(hp->expert_shared_feed_forward_length, 768u);
  EXPECT_EQ(hp->num_recurrent_layers(), 6u);
  md.set("qwen35moe.expert_shared_feed_forward_length", uint32_t{0});
  EXPECT_NE(error_of(md).find("qwen35moe.expert_shared_feed_forward_length is 0"), std::string::npos);
}

// qwen3next (llama.cpp's loader): the keys of qwen35moe without rope
// sections; value heads grouped by key head; experts required.
TEST(ReadHParamsQwen35, Qwen3NextReadsNoSectionsGroupsItsValueHeadsAndNeedsExperts) {
  const GgufMetadata dense = qwen35_metadata();
  GgufMetadata md;
  for (const auto& [k, v] : dense.entries()) {
    if (k == "qwen35.rope.dimension_sections") continue;
    std::string key = k.starts_with("qwen35.") ? "qwen3next." + k.substr(7) : k;
    md.set(key, k == "general.architecture" ? GgufValue(std::string("qwen3next")) : v);
  }
  EXPECT_NE(error_of(md).find("qwen3next.expert_count is 0"), std::string::npos) << error_of(md);
  md.set("qwen3next.expert_count", uint32_t{8});
  md.set("qwen3next.expert_used_count", uint32_t{2});
  auto hp = read_hparams(md);
  ASSERT_TRUE(hp.ok()) << hp.status().to_string();
  EXPECT_TRUE(hp->ssm_grouped_v_heads);
  EXPECT_EQ(hp->rope_sections, (std::array<uint32_t, 4>{}));
  EXPECT_EQ(hp->expert_feed_forward_length, 768u / 2);  // feed_forward_length / experts used
  EXPECT_EQ(hp->expert_shared_feed_forward_length, 768u);
  const uint32_t per_key = hp->ssm_time_step_rank / hp->ssm_group_count;
  ASSERT_GT(per_key, 1u);
  EXPECT_EQ(hp->key_head(per_key - 1), 0u);
  EXPECT_EQ(hp->key_head(per_key), 1u);
  auto tiled = read_hparams(dense);  // qwen35: value head h reads key head h % key heads
  ASSERT_TRUE(tiled.ok()) << tiled.status().to_string();
  EXPECT_FALSE(tiled->ssm_grouped_v_heads);
  EXPECT_EQ(tiled->key_head(per_key), per_key % hp->ssm_group_count);
}

TEST(ReadHParamsQwen35, OtherArchitecturesHaveNoRecurrentLayers) {
  auto hp = read_hparams(llama_metadata());
  ASSERT_TRUE(hp.ok());
  EXPECT_FALSE(hp->is_hybrid());
  EXPECT_EQ(hp->recurrent_state_bytes(), 0u);
  EXPECT_FALSE(hp->layer_is_recurrent(0));
}


// A granitehybrid with 4 layers, the second attention (head_count_kv 2), as
// llama.cpp's converter writes Granite 4.0-H.
GgufMetadata granite_metadata() {
  GgufMetadata md;
  md.set("general.architecture", std::string("granitehybrid"));
  md.set("granitehybrid.block_count", uint32_t{4});
  md.set("granitehybrid.embedding_length", uint32_t{128});
  md.set("granitehybrid.feed_forward_length", uint32_t{256});
  md.set("granitehybrid.attention.head_count", uint32_t{4});
  md.set("granitehybrid.attention.head_count_kv", GgufValue::array(std::vector<int32_t>{0, 2, 0, 0}));
  md.set("granitehybrid.ssm.conv_kernel", uint32_t{4});
  md.set("granitehybrid.ssm.inner_size", uint32_t{256});
  md.set("granitehybrid.ssm.state_size", uint32_t{16});
  md.set("granitehybrid.ssm.time_step_rank", uint32_t{8});
  md.set("granitehybrid.ssm.group_count", uint32_t{2});
  return md;
}

TEST(ReadHParamsMamba2, GraniteLayersWithoutKvHeadsAreMamba2) {
  auto hp = read_hparams(granite_metadata());
  ASSERT_TRUE(hp.ok()) << hp.status().to_string();
  EXPECT_EQ(hp->ssm_kind, SsmKind::kMamba2);
  EXPECT_EQ(hp->recurrent_layers, (std::vector<bool>{true, false, true, true}));
  EXPECT_EQ(hp->num_kv_heads, 2u);
  EXPECT_EQ(hp->num_attention_layers(), 1u);
  EXPECT_EQ(hp->mamba_head_dim(), 32u);
  EXPECT_EQ(hp->conv_dim(), 256u + 2 * 2 * 16);
  EXPECT_EQ(hp->mamba_in_proj_dim(), 2u * 256 + 2 * 2 * 16 + 8);
  // Per Mamba2 layer: 3 past inputs of every conv channel, d_state per value of d_inner.
  EXPECT_EQ(hp->recurrent_state_bytes(), 3u * (3 * 320 + 256 * 16) * 4);
  EXPECT_TRUE(hp->uses_rope);  // rope.scaling.finetuned defaults to true
  EXPECT_EQ(hp->embedding_scale, 0.0f);
  EXPECT_EQ(hp->logit_scale, 0.0f);
}

TEST(ReadHParamsMamba2, GraniteReadsItsScalesAndRopeSwitch) {
  GgufMetadata md = granite_metadata();
  md.set("granitehybrid.embedding_scale", 12.0f);
  md.set("granitehybrid.residual_scale", 0.22f);
  md.set("granitehybrid.attention.scale", 0.0078125f);
  md.set("granitehybrid.logit_scale", 6.0f);
  md.set("granitehybrid.rope.scaling.finetuned", false);
  auto hp = read_hparams(md);
  ASSERT_TRUE(hp.ok()) << hp.status().to_string();
  EXPECT_FLOAT_EQ(hp->embedding_scale, 12.0f);
  EXPECT_FLOAT_EQ(hp->residual_scale, 0.22f);
  EXPECT_FLOAT_EQ(hp->attention_scale, 0.0078125f);
  EXPECT_FLOAT_EQ(hp->logit_scale, 6.0f);
  EXPECT_FALSE(hp->uses_rope);
}

TEST(ReadHParamsMamba2, NemotronLayersAreMamba2AttentionOrAnFfnAlone) {
  GgufMetadata granite = granite_metadata();
  GgufMetadata md;
  for (const auto& [k, v] : granite.entries()) {
    std::string key = k.starts_with("granitehybrid.") ? "nemotron_h." + k.substr(14) : k;
    md.set(key, k == "general.architecture" ? GgufValue(std::string("nemotron_h")) : v);
  }
  md.set("nemotron_h.block_count", uint32_t{5});
  md.set("nemotron_h.attention.head_count_kv", GgufValue::array(std::vector<int32_t>{0, 0, 2, 0, 0}));
  md.set("nemotron_h.feed_forward_length", GgufValue::array(std::vector<int32_t>{0, 256, 0, 0, 256}));
  auto hp = read_hparams(md);
  ASSERT_TRUE(hp.ok()) << hp.status().to_string();
  EXPECT_EQ(hp->recurrent_layers, (std::vector<bool>{true, false, false, true, false}));
  EXPECT_EQ(hp->ffn_only_layers, (std::vector<bool>{false, true, false, false, true}));
  EXPECT_EQ(hp->feed_forward_length, 256u);
  EXPECT_EQ(hp->num_attention_layers(), 1u);
  EXPECT_FALSE(hp->uses_rope);  // llama.cpp: no rope for nemotron_h
  md.set("nemotron_h.expert_count", uint32_t{4});
  md.set("nemotron_h.expert_used_count", uint32_t{2});
  EXPECT_NE(error_of(md).find("nemotron_h with experts"), std::string::npos) << error_of(md);
}

TEST(ReadHParamsMamba2, GraniteExpertsAreFeedForwardLengthWideWithAnOptionalSharedExpert) {
  GgufMetadata md = granite_metadata();
  md.set("granitehybrid.expert_count", uint32_t{4});
  md.set("granitehybrid.expert_used_count", uint32_t{2});
  md.set("granitehybrid.expert_feed_forward_length", uint32_t{32});  // llama.cpp's granite loader ignores it
  auto hp = read_hparams(md);
  ASSERT_TRUE(hp.ok()) << hp.status().to_string();
  EXPECT_EQ(hp->expert_feed_forward_length, 256u);
  EXPECT_EQ(hp->expert_shared_feed_forward_length, 0u);
  md.set("granitehybrid.expert_shared_feed_forward_length", uint32_t{96});
  hp = read_hparams(md);
  ASSERT_TRUE(hp.ok()) << hp.status().to_string();
  EXPECT_EQ(hp->expert_shared_feed_forward_length, 96u);
}

TEST(ReadHParamsMamba2, MissingMamba2KeysAreNamed) {
  for (const char* key : {"granitehybrid.ssm.conv_kernel", "granitehybrid.ssm.inner_size",
                          "granitehybrid.ssm.state_size", "granitehybrid.ssm.time_step_rank",
                          "granitehybrid.ssm.group_count"}) {
    const GgufMetadata full = granite_metadata();
    GgufMetadata md;
    for (const auto& [k, v] : full.entries()) {
      if (k != key) md.set(k, v);
    }
    EXPECT_NE(error_of(md).find(key), std::string::npos) << key << ": " << error_of(md);
  }
}

TEST(ReadHParamsMamba2, BadSizesAndLayerArraysAreNamed) {
  struct Case {
    const char* key;
    GgufValue value;
    const char* want;
  };
  const Case cases[] = {
      {"granitehybrid.ssm.inner_size", GgufValue(uint32_t{192}), "ssm.inner_size 192 must be twice embedding_length"},
      {"granitehybrid.ssm.time_step_rank", GgufValue(uint32_t{3}), "ssm.time_step_rank 3 must be a positive multiple"},
      {"granitehybrid.ssm.inner_size", GgufValue(uint32_t{0}), "ssm.inner_size 0"},
      {"granitehybrid.ssm.conv_kernel", GgufValue(uint32_t{9}), "granitehybrid.ssm.conv_kernel 9 must be in [1, 8]"},
      {"granitehybrid.attention.head_count_kv", GgufValue::array(std::vector<int32_t>{0, 2, 1, 0}),
       "'granitehybrid.attention.head_count_kv' has layers of 2 and of 1"},
      {"granitehybrid.attention.head_count_kv", GgufValue::array(std::vector<int32_t>{0, 2, 0}),
       "'granitehybrid.attention.head_count_kv' has 3 entries, expected block_count 4"},
      {"granitehybrid.attention.head_count_kv", GgufValue::array(std::vector<int32_t>{0, 0, 0, 0}),
       "granitehybrid.attention.head_count_kv is 0 for every attention layer"},
  };
  for (const Case& c : cases) {
    GgufMetadata md = granite_metadata();
    md.set(c.key, c.value);
    EXPECT_NE(error_of(md).find(c.want), std::string::npos) << c.key << ": " << error_of(md);
  }
}

}  // namespace
}  // namespace met
