// Tests for the Mamba2 hybrids granitehybrid and nemotron_h, from the file to
// the logits: make_random_model's files bind every layer kind (Mamba2,
// attention, nemotron_h's FFN-only layers) and name a missing or misshapen
// Mamba2 tensor; the double-precision reference forward matches logits
// llama.cpp computed on the same files; CpuDevice (ForwardPass with
// Mamba2Layer, state in cpu::RecurrentState) matches the reference at every
// position of a fixed prompt per weight dtype; prefill in one chunk, in
// several and token by token gives the same bits (the recurrent scan) or the
// same logits to float rounding (the chunked scan).
#include <algorithm>

#include <gtest/gtest.h>

#include "model/cpu_device.h"
#include "model/random_model.h"
#include "testing/model_test_support.h"
#include "testing/reference_forward.h"
#include "testing/temp_dir.h"

namespace met::mamba2_model_test {
namespace {

constexpr uint32_t kVocab = 600;

// granitehybrid: 4 layers "M*MM" (an attention layer between Mamba2 ones),
// each with its SwiGLU FFN, Granite 4.0-H's multipliers. nemotron_h: 6 layers
// "M-M*-M" (Mamba2, relu² MLP, attention). Both: 8 Mamba2 heads of 32 values
// over 2 groups of d_state 16, so heads 0-3 read group 0 and 4-7 group 1.
// With `moe`, granitehybrid's FFNs are 4 experts of 64 (2 per token) and an
// ungated shared expert of 96.
RandomModelSpec mamba_spec(Arch arch, GgmlType dtype, bool rope = false, bool moe = false) {
  RandomModelSpec s;
  s.arch = arch;
  s.num_layers = arch == Arch::kGraniteHybrid ? 4 : 6;
  s.embedding_length = 128;
  s.num_heads = 2;
  s.num_kv_heads = 1;
  s.head_dim = 32;
  s.feed_forward_length = 256;
  s.vocab_size = kVocab;
  s.context_length = 512;
  s.ssm_state_size = 16;
  s.ssm_time_step_rank = 8;
  s.ssm_group_count = 2;
  s.layer_pattern = arch == Arch::kGraniteHybrid ? "M*MM" : "M-M*-M";
  s.dtype = dtype;
  s.seed = 5;
  if (arch == Arch::kGraniteHybrid) {
    s.embedding_scale = 12.0f, s.residual_scale = 0.22f, s.logit_scale = 6.0f, s.attention_scale = 1.0f / 32;
    s.attention_rope = rope;
  }
  if (moe) {
    s.num_experts = 4, s.num_experts_used = 2, s.expert_feed_forward_length = 64;
    s.shared_expert_feed_forward_length = 96;
  }
  return s;
}

TEST(Mamba2Model, GraniteHybridBindsMamba2AndAttentionLayersWithTheirFfns) {
  testing::TempDir dir;
  auto m = testing::make_and_load(mamba_spec(Arch::kGraniteHybrid, GgmlType::kQ8_0), dir);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->arch(), Arch::kGraniteHybrid);
  const ModelHParams& hp = m->hparams();
  EXPECT_FLOAT_EQ(hp.embedding_scale, 12.0f);
  EXPECT_FLOAT_EQ(hp.residual_scale, 0.22f);
  EXPECT_FLOAT_EQ(hp.logit_scale, 6.0f);
  EXPECT_FALSE(hp.uses_rope);
  const auto& layers = m->weights().layers;
  ASSERT_EQ(layers.size(), 4u);
  for (size_t i : {0, 2, 3}) {
    const Mamba2Weights& w = layers[i].mamba;
    EXPECT_EQ(layers[i].kind, LayerKind::kMamba2) << i;
    EXPECT_EQ(w.in.rows, 2 * 256 + 2 * 2 * 16 + 8);  // z, x B C, dt
    EXPECT_EQ(w.out.rows, 128);
    EXPECT_EQ(w.out.cols, 256);
    ASSERT_NE(w.a, nullptr);
    EXPECT_LT(w.a[7], 0.0f);
    EXPECT_NE(w.conv, nullptr);
    EXPECT_NE(w.conv_bias, nullptr);
    EXPECT_NE(w.d, nullptr);
    EXPECT_NE(w.norm, nullptr);
    EXPECT_NE(layers[i].ffn_norm, nullptr);
    EXPECT_NE(layers[i].w_gate.data, nullptr);
  }
  EXPECT_EQ(layers[1].kind, LayerKind::kAttention);
  EXPECT_EQ(layers[1].wq.rows, 64);
  EXPECT_EQ(layers[1].q_norm, nullptr);
}

TEST(Mamba2Model, GraniteHybridMoeHasAnUngatedSharedExpert) {
  testing::TempDir dir;
  auto m = testing::make_and_load(mamba_spec(Arch::kGraniteHybrid, GgmlType::kF32, false, true), dir);
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(m->traits().moe);
  EXPECT_TRUE(m->traits().moe_norm_weights);
  EXPECT_EQ(m->hparams().expert_feed_forward_length, 64u);  // feed_forward_length, as llama.cpp sizes them
  for (const LayerWeights& l : m->weights().layers) {
    EXPECT_EQ(l.moe.gate.size(), 4u);
    EXPECT_EQ(l.moe.gate[0].rows, 64);
    EXPECT_TRUE(l.moe.has_shared);
    EXPECT_FALSE(l.moe.shared_gated);
    EXPECT_EQ(l.moe.shared_up.rows, 96);
    EXPECT_EQ(l.w_gate.data, nullptr);
  }
  EXPECT_EQ(m->file().find_tensor("blk.0.ffn_gate_inp_shexp.weight"), nullptr);
}

TEST(Mamba2Model, NemotronHLayersHaveAMixerOrAnFfnNotBoth) {
  testing::TempDir dir;
  auto m = testing::make_and_load(mamba_spec(Arch::kNemotronH, GgmlType::kF16), dir);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->arch(), Arch::kNemotronH);
  EXPECT_TRUE(m->traits().ffn_relu2);
  EXPECT_EQ(m->hparams().num_attention_layers(), 1u);
  EXPECT_EQ(m->hparams().num_recurrent_layers(), 3u);
  const auto& layers = m->weights().layers;
  const LayerKind want[] = {LayerKind::kMamba2,    LayerKind::kFfnOnly, LayerKind::kMamba2,
                            LayerKind::kAttention, LayerKind::kFfnOnly, LayerKind::kMamba2};
  ASSERT_EQ(layers.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(layers[i].kind, want[i]) << i;
    const bool ffn = want[i] == LayerKind::kFfnOnly;
    EXPECT_EQ(layers[i].ffn_norm != nullptr, ffn) << i;
    EXPECT_EQ(layers[i].attn_norm != nullptr, !ffn) << i;
    EXPECT_EQ(layers[i].w_up.data != nullptr, ffn) << i;
    EXPECT_EQ(layers[i].w_gate.data, nullptr) << i;
  }
}

TEST(Mamba2Model, MissingOrMisshapenMamba2TensorIsNamed) {
  testing::TempDir dir;
  ASSERT_TRUE(make_random_model(mamba_spec(Arch::kGraniteHybrid, GgmlType::kF32), dir.file("m.gguf")).ok());
  testing::rewrite_gguf(dir.file("m.gguf"), dir.file("cut.gguf"), "blk.2.ssm_d");
  auto m = Model::load(dir.file("cut.gguf"));
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("'blk.2.ssm_d' is missing"), std::string::npos) << m.status().message();
  testing::rewrite_gguf(dir.file("m.gguf"), dir.file("bad.gguf"), "", "blk.0.ssm_norm.weight", {256});
  m = Model::load(dir.file("bad.gguf"));
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("'blk.0.ssm_norm.weight' has shape [256], expected [128, 2]"),
            std::string::npos)
      << m.status().message();
}

// llama.cpp's logits for fixed_prompt(10, 600) on mamba_spec(arch, F32)
// (libllama 34af94cd-era through bench/peer/llama_logits, F32 KV cache,
// flash attention off; the same files from `met make-model --arch ARCH
// --layers L --embd 128 --heads 2 --kv-heads 1 --head-dim 32 --ff 256 --vocab
// 600 --ctx 512 --ssm-state 16 --ssm-heads 8 --ssm-groups 2 --pattern P
// --seed 5 --dtype f32`, L and P as mamba_spec's) at positions 0, 5, 9 and
// token ids 0, 1, 2, 3, 299, 599.
constexpr size_t kGoldenPositions[] = {0, 5, 9};
constexpr size_t kGoldenIds[] = {0, 1, 2, 3, 299, 599};
constexpr float kGraniteGolden[3][6] = {{0.219385f, 0.170815f, -0.301132f, -0.098927f, 0.128901f, -0.213243f},
                                        {-0.073076f, -0.161104f, -0.067524f, 0.140686f, -0.021163f, 0.139125f},
                                        {-0.002055f, 0.034851f, -0.004823f, -0.109788f, 0.198183f, 0.196281f}};
constexpr float kNemotronGolden[3][6] = {{-0.565744f, 0.432407f, -0.989810f, -1.291729f, 0.017807f, -1.919950f},
                                         {0.019836f, 1.313248f, -1.385743f, -0.991516f, 0.955618f, 1.196221f},
                                         {0.761135f, 1.032708f, -1.666231f, -1.115937f, 0.500832f, -0.078591f}};

class Mamba2Archs : public ::testing::TestWithParam<Arch> {};

TEST_P(Mamba2Archs, ReferenceLogitsMatchLlamaCppOnTheSameFile) {
  testing::TempDir dir;
  auto m = testing::make_and_load(mamba_spec(GetParam(), GgmlType::kF32), dir);
  ASSERT_NE(m, nullptr);
  const auto logits = testing::ReferenceForward(*m).logits(testing::fixed_prompt(10, kVocab));
  const auto& golden = GetParam() == Arch::kGraniteHybrid ? kGraniteGolden : kNemotronGolden;
  for (size_t p = 0; p < 3; ++p) {
    for (size_t i = 0; i < 6; ++i) {
      EXPECT_NEAR(logits[kGoldenPositions[p]][kGoldenIds[i]], golden[p][i], 2e-5)
          << "position " << kGoldenPositions[p] << " id " << kGoldenIds[i];
    }
  }
}

// The state after a prefill does not depend on how it was cut into steps:
// one chunk of 37, chunks of 8 and of 5, and one token per step give the
// same bits (every row runs the recurrent scan); with the chunked scan for
// prefill they agree to its float rounding, and with the reference.
TEST_P(Mamba2Archs, OneChunkManyChunksAndTokenByTokenGiveTheSameLogits) {
  testing::TempDir dir;
  auto m = testing::make_and_load(mamba_spec(GetParam(), GgmlType::kF32), dir);
  ASSERT_NE(m, nullptr);
  testing::expect_prefill_chunkings_agree(*m, {.chunked_ssm_scan = true});
}

// One state slot holds every Mamba2 layer's conv state ((d_conv - 1) x
// conv_dim) and scan state (d_inner x d_state); the KV cache holds the
// attention layers only.
TEST_P(Mamba2Archs, StateSlotsHoldEveryMamba2LayersConvAndScanState) {
  testing::TempDir dir;
  auto m = testing::make_and_load(mamba_spec(GetParam(), GgmlType::kF32), dir);
  ASSERT_NE(m, nullptr);
  auto dev = testing::make_test_device(*m);
  ASSERT_NE(dev, nullptr);
  const int64_t per_layer = (3 * (256 + 2 * 2 * 16) + 256 * 16) * 4;
  EXPECT_EQ(dev->info().state_slot_bytes, 3 * per_layer);
  EXPECT_EQ(static_cast<uint64_t>(dev->info().state_slot_bytes), m->hparams().recurrent_state_bytes());
  EXPECT_EQ(dev->info().num_layers, 1);
  EXPECT_EQ(dev->info().num_state_slots, 8);
}

TEST_P(Mamba2Archs, AStepRewoundThroughTheRollbackRingIsExact) {
  testing::TempDir dir;
  auto m = testing::make_and_load(mamba_spec(GetParam(), GgmlType::kF32), dir);
  ASSERT_NE(m, nullptr);
  testing::expect_rewound_steps_are_exact(*m, 3);
}

TEST_P(Mamba2Archs, AVerifyStepContinuesExactlyFromAnyAcceptedPrefixItReplays) {
  testing::TempDir dir;
  auto m = testing::make_and_load(mamba_spec(GetParam(), GgmlType::kF32), dir);
  ASSERT_NE(m, nullptr);
  testing::expect_verify_steps_rewind_exactly(*m, 4);
}

INSTANTIATE_TEST_SUITE_P(Archs, Mamba2Archs, ::testing::Values(Arch::kGraniteHybrid, Arch::kNemotronH),
                         [](const auto& param_info) { return std::string(arch_name(param_info.param)); });

struct Mamba2Case {
  Arch arch = Arch::kGraniteHybrid;
  GgmlType dtype = GgmlType::kF32;
  bool rope = false;
  double tolerance = 0.0;  // max |logit error| relative to the largest |logit|
  bool moe = false;
};

class Mamba2VsReference : public ::testing::TestWithParam<Mamba2Case> {};

// 40 tokens: 29 in prefill chunks of 13, 13 and 3, then 11 decode steps.
TEST_P(Mamba2VsReference, LogitsAtEveryPositionAgreeWithinTheDtypesTolerance) {
  const Mamba2Case p = GetParam();
  testing::TempDir dir;
  auto m = testing::make_and_load(mamba_spec(p.arch, p.dtype, p.rope, p.moe), dir);
  ASSERT_NE(m, nullptr);
  const auto tokens = testing::fixed_prompt(40, kVocab);
  const auto ref = testing::ReferenceForward(*m).logits(tokens);
  auto dev = testing::make_test_device(*m);
  ASSERT_NE(dev, nullptr);
  const auto got = testing::logits_at_every_position(*dev, tokens, 29, 13, testing::block_range(0, 4));
  ASSERT_EQ(got.size(), tokens.size());
  const double worst = testing::expect_logits_agree(ref, got, p.tolerance).worst;
  RecordProperty("max_relative_error", std::to_string(worst));
}

// F32 and F16 differ from the reference in float summation order only; Q8_0
// also quantizes the activations per block, which the Mamba2 state carries
// to every later position.
INSTANTIATE_TEST_SUITE_P(
    Mamba2ArchsAndDtypes, Mamba2VsReference,
    ::testing::ValuesIn([] {
      std::vector<Mamba2Case> v;
      for (Arch arch : {Arch::kGraniteHybrid, Arch::kNemotronH}) {
        v.push_back({arch, GgmlType::kF32, false, 1e-4});
        v.push_back({arch, GgmlType::kF16, false, 1e-4});
        v.push_back({arch, GgmlType::kQ8_0, false, 0.1});
      }
      v.push_back({Arch::kGraniteHybrid, GgmlType::kF32, true, 1e-4});
      v.push_back({Arch::kGraniteHybrid, GgmlType::kF32, false, 1e-4, true});
      v.push_back({Arch::kGraniteHybrid, GgmlType::kF16, false, 1e-4, true});
      return v;
    }()),
    [](const auto& param_info) {
      const Mamba2Case& c = param_info.param;
      return std::string(arch_name(c.arch)) + "_" + std::string(ggml_type_name(c.dtype)) + (c.rope ? "_rope" : "") +
             (c.moe ? "_moe" : "");
    });

}  // namespace
}  // namespace met::mamba2_model_test
