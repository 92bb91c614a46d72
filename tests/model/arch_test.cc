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

// 4 trunk layers (0-2 gated delta, 3 attention) and one MTP block.
ModelHParams qwen35_hparams() {
  ModelHParams hp = small_hparams();
  hp.num_layers = 4;
  hp.ssm_conv_kernel = 4;
  hp.ssm_state_size = 16;
  hp.ssm_group_count = 2;
  hp.ssm_time_step_rank = 4;
  hp.ssm_inner_size = 64;
  hp.nextn_predict_layers = 1;
  hp.recurrent_layers = {true, true, true, false};
  return hp;
}

TEST(ArchTensors, Qwen35GatedDeltaLayersHaveLlamaCppsShapes) {
  auto m = by_name(arch_tensors(Arch::kQwen35, qwen35_hparams(), false));
  using Shape = std::vector<uint64_t>;
  EXPECT_EQ(m.at("blk.0.attn_qkv.weight").shape, (Shape{64, 2 * 2 * 16 + 64}));
  EXPECT_EQ(m.at("blk.0.attn_gate.weight").shape, (Shape{64, 64}));
  EXPECT_EQ(m.at("blk.1.ssm_conv1d.weight").shape, (Shape{4, 128}));
  EXPECT_EQ(m.at("blk.1.ssm_conv1d.weight").role, TensorRole::kConv);
  EXPECT_EQ(m.at("blk.2.ssm_dt.bias").shape, (Shape{4}));
  EXPECT_EQ(m.at("blk.2.ssm_a").shape, (Shape{4}));
  EXPECT_EQ(m.at("blk.2.ssm_a").role, TensorRole::kDecay);
  EXPECT_EQ(m.at("blk.0.ssm_beta.weight").shape, (Shape{64, 4}));
  EXPECT_EQ(m.at("blk.0.ssm_alpha.weight").shape, (Shape{64, 4}));
  EXPECT_EQ(m.at("blk.0.ssm_norm.weight").shape, (Shape{16}));
  EXPECT_EQ(m.at("blk.0.ssm_out.weight").shape, (Shape{64, 64}));
  EXPECT_EQ(m.at("blk.0.post_attention_norm.weight").role, TensorRole::kNorm);
  EXPECT_FALSE(m.contains("blk.0.attn_q.weight"));
  EXPECT_FALSE(m.contains("blk.0.ffn_norm.weight"));
  EXPECT_TRUE(m.contains("blk.0.ffn_down.weight"));
}

TEST(ArchTensors, Qwen35AttentionLayersCarryTheirGateInQ) {
  auto m = by_name(arch_tensors(Arch::kQwen35, qwen35_hparams(), false));
  using Shape = std::vector<uint64_t>;
  EXPECT_EQ(m.at("blk.3.attn_q.weight").shape, (Shape{64, 2 * 64}));
  EXPECT_EQ(m.at("blk.3.attn_k.weight").shape, (Shape{64, 32}));
  EXPECT_EQ(m.at("blk.3.attn_output.weight").shape, (Shape{64, 64}));
  EXPECT_EQ(m.at("blk.3.attn_q_norm.weight").shape, (Shape{16}));
  EXPECT_FALSE(m.contains("blk.3.attn_qkv.weight"));
  EXPECT_FALSE(m.contains("blk.3.ssm_a"));
}

TEST(ArchTensors, Qwen35MtpBlockIsAnAttentionBlockWithItsProjection) {
  auto specs = arch_tensors(Arch::kQwen35, qwen35_hparams(), false);
  auto m = by_name(specs);
  using Shape = std::vector<uint64_t>;
  EXPECT_EQ(m.at("blk.4.attn_q.weight").shape, (Shape{64, 128}));
  EXPECT_EQ(m.at("blk.4.nextn.eh_proj.weight").shape, (Shape{128, 64}));
  EXPECT_EQ(m.at("blk.4.nextn.enorm.weight").shape, (Shape{64}));
  EXPECT_EQ(m.at("blk.4.nextn.hnorm.weight").shape, (Shape{64}));
  EXPECT_EQ(m.at("blk.4.nextn.shared_head_norm.weight").shape, (Shape{64}));
  EXPECT_TRUE(m.contains("blk.4.ffn_up.weight"));
  EXPECT_FALSE(m.contains("blk.5.attn_norm.weight"));
  // 3 + 3 gated delta layers × 14 + 2 attention blocks × 11 + the MTP block's 4.
  EXPECT_EQ(specs.size(), 3u + 3u * 14u + 2u * 11u + 4u);
}

TEST(ArchTensors, Qwen35MoeHasRoutedAndSharedExperts) {
  ModelHParams hp = qwen35_hparams();
  hp.expert_count = 8;
  hp.expert_used_count = 2;
  hp.expert_feed_forward_length = 32;
  hp.expert_shared_feed_forward_length = 48;
  auto m = by_name(arch_tensors(Arch::kQwen35Moe, hp, true));
  using Shape = std::vector<uint64_t>;
  for (const char* layer : {"blk.0.", "blk.3.", "blk.4."}) {
    const std::string b = layer;
    EXPECT_EQ(m.at(b + "ffn_gate_inp.weight").shape, (Shape{64, 8}));
    EXPECT_EQ(m.at(b + "ffn_down_exps.weight").shape, (Shape{32, 64, 8}));
    EXPECT_EQ(m.at(b + "ffn_gate_inp_shexp.weight").shape, (Shape{64}));
    EXPECT_EQ(m.at(b + "ffn_up_shexp.weight").shape, (Shape{64, 48}));
    EXPECT_FALSE(m.contains(b + "ffn_up.weight"));
  }
  EXPECT_FALSE(m.contains("output.weight"));
  EXPECT_TRUE(arch_is_hybrid(Arch::kQwen35Moe));
  EXPECT_FALSE(arch_is_hybrid(Arch::kQwen3Moe));
}

// llama.cpp's qwen3next loader: ssm_ba [embd, 2 v_heads] where qwen35 has
// ssm_beta and ssm_alpha; the rest as qwen35moe.
TEST(ArchTensors, Qwen3NextPacksBetaAndAlphaIntoSsmBa) {
  ModelHParams hp = qwen35_hparams();
  hp.expert_count = 8;
  hp.expert_used_count = 2;
  hp.expert_feed_forward_length = 32;
  hp.expert_shared_feed_forward_length = 48;
  const auto next = by_name(arch_tensors(Arch::kQwen3Next, hp, true));
  const auto moe = by_name(arch_tensors(Arch::kQwen35Moe, hp, true));
  using Shape = std::vector<uint64_t>;
  EXPECT_EQ(next.at("blk.0.ssm_ba.weight").shape, (Shape{64, 2 * uint64_t{hp.ssm_time_step_rank}}));
  EXPECT_FALSE(next.contains("blk.0.ssm_beta.weight"));
  EXPECT_FALSE(next.contains("blk.0.ssm_alpha.weight"));
  EXPECT_FALSE(next.contains("blk.3.ssm_ba.weight"));  // the attention layer
  EXPECT_EQ(next.size() + 3, moe.size());               // one matrix for two in each gated delta layer
  for (const auto& [name, spec] : next) {
    if (name.find("ssm_ba") != std::string::npos) continue;
    ASSERT_TRUE(moe.contains(name)) << name;
    EXPECT_EQ(moe.at(name).shape, spec.shape) << name;
  }
  EXPECT_TRUE(arch_is_hybrid(Arch::kQwen3Next));
}

TEST(ArchNames, Qwen35ArchitecturesKeepTheirGgufNames) {
  EXPECT_EQ(parse_arch("qwen35"), Arch::kQwen35);
  EXPECT_EQ(parse_arch("qwen35moe"), Arch::kQwen35Moe);
  EXPECT_EQ(parse_arch("qwen3next"), Arch::kQwen3Next);
  EXPECT_EQ(gguf_arch_name(Arch::kQwen3Next), "qwen3next");
  EXPECT_EQ(gguf_arch_name(Arch::kQwen35), "qwen35");
  EXPECT_EQ(gguf_arch_name(Arch::kQwen35Moe), "qwen35moe");
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


// 4 layers: 0, 2, 3 Mamba2, 1 attention; nemotron_h's layer 2 an FFN alone.
ModelHParams mamba_hparams() {
  ModelHParams hp = small_hparams();
  hp.num_layers = 4;
  hp.ssm_kind = SsmKind::kMamba2;
  hp.ssm_conv_kernel = 4;
  hp.ssm_state_size = 16;
  hp.ssm_group_count = 2;
  hp.ssm_time_step_rank = 4;
  hp.ssm_inner_size = 128;
  hp.recurrent_layers = {true, false, true, true};
  return hp;
}

TEST(ArchTensors, GraniteHybridMamba2LayersHaveLlamaCppsShapes) {
  auto m = by_name(arch_tensors(Arch::kGraniteHybrid, mamba_hparams(), false));
  using Shape = std::vector<uint64_t>;
  EXPECT_EQ(m.at("blk.0.ssm_in.weight").shape, (Shape{64, 2 * 128 + 2 * 2 * 16 + 4}));
  EXPECT_EQ(m.at("blk.0.ssm_conv1d.weight").shape, (Shape{4, 128 + 2 * 2 * 16}));
  EXPECT_EQ(m.at("blk.0.ssm_conv1d.weight").role, TensorRole::kConv);
  EXPECT_EQ(m.at("blk.0.ssm_conv1d.bias").shape, (Shape{128 + 2 * 2 * 16}));
  EXPECT_EQ(m.at("blk.2.ssm_dt.bias").shape, (Shape{4}));
  EXPECT_EQ(m.at("blk.2.ssm_a").shape, (Shape{1, 4}));
  EXPECT_EQ(m.at("blk.2.ssm_a").role, TensorRole::kDecay);
  EXPECT_EQ(m.at("blk.2.ssm_d").shape, (Shape{1, 4}));
  EXPECT_EQ(m.at("blk.2.ssm_d").role, TensorRole::kSkip);
  EXPECT_EQ(m.at("blk.3.ssm_norm.weight").shape, (Shape{64, 2}));
  EXPECT_EQ(m.at("blk.3.ssm_out.weight").shape, (Shape{128, 64}));
  EXPECT_EQ(m.at("blk.1.attn_q.weight").shape, (Shape{64, 64}));
  EXPECT_EQ(m.at("blk.1.attn_k.weight").shape, (Shape{64, 32}));
  EXPECT_FALSE(m.contains("blk.0.attn_q.weight"));
  EXPECT_FALSE(m.contains("blk.1.ssm_in.weight"));
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(m.contains("blk." + std::to_string(i) + ".ffn_norm.weight")) << i;
    EXPECT_TRUE(m.contains("blk." + std::to_string(i) + ".ffn_gate.weight")) << i;
  }
}

TEST(ArchTensors, NemotronHLayersHaveAMixerOrAGatelessFfn) {
  ModelHParams hp = mamba_hparams();
  hp.recurrent_layers = {true, false, false, true};
  hp.ffn_only_layers = {false, false, true, false};
  auto m = by_name(arch_tensors(Arch::kNemotronH, hp, false));
  using Shape = std::vector<uint64_t>;
  EXPECT_EQ(m.at("blk.2.ffn_up.weight").shape, (Shape{64, 96}));
  EXPECT_EQ(m.at("blk.2.ffn_down.weight").shape, (Shape{96, 64}));
  EXPECT_FALSE(m.contains("blk.2.ffn_gate.weight"));
  EXPECT_FALSE(m.contains("blk.2.ffn_norm.weight"));
  EXPECT_FALSE(m.contains("blk.2.attn_q.weight"));
  EXPECT_TRUE(m.contains("blk.1.attn_q.weight"));
  EXPECT_FALSE(m.contains("blk.1.ffn_up.weight"));
  EXPECT_TRUE(m.contains("blk.3.ssm_in.weight"));
  EXPECT_FALSE(m.contains("blk.3.ffn_up.weight"));
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(m.contains("blk." + std::to_string(i) + ".attn_norm.weight")) << i;
}

}  // namespace
}  // namespace met
