// Tests for make_random_model (src/model/random_model.h), read back through
// GgufFile and the tensor dequantizers.
#include "model/random_model.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>
#include <sstream>

#include <gtest/gtest.h>

#include "gguf/gguf_file.h"
#include "model/random_tensor_fill.h"
#include "tensor/quantize.h"
#include "testing/model_test_support.h"
#include "testing/temp_dir.h"

namespace met {
namespace {

RandomModelSpec small_spec(Arch arch, GgmlType dtype) {
  RandomModelSpec s = testing::small_model_spec(arch, dtype);
  s.vocab_size = 1024;
  s.context_length = 512;
  s.seed = 42;
  return s;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<float> dequantize(const GgufFile& f, const GgufTensorInfo& t) {
  std::vector<float> out(t.num_elements);
  Status s = dequantize_row(t.type, f.tensor_data(t), out);
  EXPECT_TRUE(s.ok()) << s.to_string();
  return out;
}

TEST(RandomModel, EveryArchReadsBackWithItsTensorsAndHParams) {
  for (Arch arch : {Arch::kLlama, Arch::kMistral, Arch::kQwen2, Arch::kQwen3}) {
    testing::TempDir dir;
    const RandomModelSpec spec = small_spec(arch, GgmlType::kF16);
    auto made = make_random_model(spec, dir.file("m.gguf"));
    ASSERT_TRUE(made.ok()) << made.status().to_string();
    auto f = GgufFile::open(dir.file("m.gguf"));
    ASSERT_TRUE(f.ok()) << f.status().to_string();
    auto hp = read_hparams(f->metadata());
    ASSERT_TRUE(hp.ok()) << hp.status().to_string();
    EXPECT_EQ(hp->arch, gguf_arch_name(arch));
    EXPECT_EQ(hp->num_layers, 2u);
    EXPECT_EQ(hp->vocab_size, 1024u);
    const auto specs = arch_tensors(arch, *hp, false);
    ASSERT_EQ(f->tensors().size(), specs.size());
    uint64_t params = 0;
    for (const auto& s : specs) {
      const GgufTensorInfo* t = f->find_tensor(s.name);
      ASSERT_NE(t, nullptr) << s.name;
      EXPECT_EQ(t->shape, s.shape);
      EXPECT_EQ(t->type, s.role == TensorRole::kMatrix ? GgmlType::kF16 : GgmlType::kF32) << s.name;
      params += t->num_elements;
    }
    EXPECT_EQ(made->num_params, params);
    EXPECT_TRUE(f->metadata().contains("tokenizer.chat_template"));
  }
}

TEST(RandomModel, SameSeedGivesTheSameBytesWhateverTheThreads) {
  testing::TempDir dir;
  RandomModelSpec a = small_spec(Arch::kLlama, GgmlType::kQ8_0);
  RandomModelSpec b = a;
  a.num_threads = 1;
  b.num_threads = 3;
  ASSERT_TRUE(make_random_model(a, dir.file("a.gguf")).ok());
  ASSERT_TRUE(make_random_model(b, dir.file("b.gguf")).ok());
  EXPECT_EQ(slurp(dir.file("a.gguf")), slurp(dir.file("b.gguf")));
  RandomModelSpec c = a;
  c.seed = 43;
  ASSERT_TRUE(make_random_model(c, dir.file("c.gguf")).ok());
  EXPECT_NE(slurp(dir.file("a.gguf")), slurp(dir.file("c.gguf")));
}

TEST(RandomModel, MatricesHaveVarianceOneOverFanInAndNormsAreOne) {
  testing::TempDir dir;
  ASSERT_TRUE(make_random_model(small_spec(Arch::kLlama, GgmlType::kF32), dir.file("m.gguf")).ok());
  auto f = GgufFile::open(dir.file("m.gguf"));
  ASSERT_TRUE(f.ok());
  std::vector<float> w = dequantize(*f, *f->find_tensor("blk.0.ffn_down.weight"));
  double sum = 0, sum_sq = 0;
  for (float x : w) sum += x, sum_sq += double(x) * x;
  const double mean = sum / w.size(), var = sum_sq / w.size() - mean * mean;
  EXPECT_NEAR(mean, 0.0, 0.01);
  EXPECT_NEAR(var * 512.0, 1.0, 0.05);  // fan-in of ffn_down is the feed-forward length
  for (float x : dequantize(*f, *f->find_tensor("output_norm.weight"))) EXPECT_EQ(x, 1.0f);
}

TEST(RandomModel, RowsThatDoNotFitTheBlockFallBackAndSaySo) {
  testing::TempDir dir;
  RandomModelSpec s = small_spec(Arch::kLlama, GgmlType::kQ4_K);
  s.feed_forward_length = 320;  // ffn_down rows of 320 do not fit Q4_K's 256
  auto made = make_random_model(s, dir.file("m.gguf"));
  ASSERT_TRUE(made.ok()) << made.status().to_string();
  ASSERT_EQ(made->fallbacks.size(), 2u);  // one ffn_down per layer
  EXPECT_NE(made->fallbacks[0].find("ffn_down"), std::string::npos);
  auto f = GgufFile::open(dir.file("m.gguf"));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->find_tensor("blk.0.ffn_down.weight")->type, GgmlType::kQ8_0);
  EXPECT_EQ(f->find_tensor("blk.0.ffn_up.weight")->type, GgmlType::kQ4_K);
}

TEST(RandomModel, InvalidSpecsAreRefusedWithTheReason) {
  RandomModelSpec s = small_spec(Arch::kLlama, GgmlType::kF32);
  s.num_kv_heads = 3;
  EXPECT_NE(validate_spec(s).message().find("--kv-heads 3"), std::string::npos);
  s = small_spec(Arch::kLlama, GgmlType::kIQ2_XXS);
  EXPECT_NE(validate_spec(s).message().find("--dtype iq2_xxs"), std::string::npos);
  s = small_spec(Arch::kLlama, GgmlType::kF32);
  s.embedding_length = 250;
  EXPECT_NE(validate_spec(s).message().find("--embd 250"), std::string::npos);
}

TEST(RandomModelPreset, SizesMatchTheirNames) {
  auto params = [](const RandomModelSpec& s) {
    uint64_t n = 0;
    for (const auto& t : arch_tensors(s.arch, spec_hparams(s), s.tied_output)) {
      uint64_t e = 1;
      for (uint64_t d : t.shape) e *= d;
      n += e;
    }
    return n;
  };
  EXPECT_NEAR(params(*random_model_preset("tiny")) / 1e6, 15, 2);
  EXPECT_NEAR(params(*random_model_preset("small")) / 1e6, 110, 10);
  EXPECT_NEAR(params(*random_model_preset("medium")) / 1e6, 500, 25);
  EXPECT_EQ(random_model_preset("huge"), std::nullopt);
}

uint64_t preset_params(const RandomModelSpec& s) {
  uint64_t n = 0;
  for (const auto& t : arch_tensors(s.arch, spec_hparams(s), s.tied_output)) {
    uint64_t e = 1;
    for (uint64_t d : t.shape) e *= d;
    n += e;
  }
  return n;
}

TEST(RandomModelPreset, Qwen35PresetsHaveTheirSizesAndStateBytes) {
  struct Case {
    const char* name;
    double params_m, state_mib;
    uint32_t layers, recurrent;
  };
  // State per sequence: recurrent layers × (3 conv_dim + v_heads × state²) floats.
  for (const Case& c : {Case{"tiny", 16.4, 6 * (3.0 * 768 + 4 * 64 * 64) * 4 / 1048576, 8, 6},
                        Case{"small", 122, 9 * (3.0 * 2048 + 8 * 128 * 128) * 4 / 1048576, 12, 9},
                        Case{"medium", 505, 18 * (3.0 * 4096 + 16 * 128 * 128) * 4 / 1048576, 24, 18}}) {
    auto s = random_model_preset(c.name, Arch::kQwen35);
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->arch, Arch::kQwen35);
    EXPECT_TRUE(validate_spec(*s).ok()) << validate_spec(*s).to_string();
    EXPECT_NEAR(preset_params(*s) / 1e6, c.params_m, c.params_m * 0.05) << c.name;
    const ModelHParams hp = spec_hparams(*s);
    EXPECT_EQ(hp.num_layers, c.layers);
    EXPECT_EQ(hp.num_recurrent_layers(), c.recurrent);
    EXPECT_EQ(hp.nextn_predict_layers, 1u);
    EXPECT_EQ(hp.rope_dims, hp.head_dim / 4);
    EXPECT_NEAR(hp.recurrent_state_bytes() / 1048576.0, c.state_mib, 1e-9) << c.name;
    EXPECT_EQ(hp.ssm_time_step_rank % hp.ssm_group_count, 0u);
  }
  auto medium = spec_hparams(*random_model_preset("medium", Arch::kQwen35));
  EXPECT_EQ(medium.head_dim, 256u);
  EXPECT_EQ(medium.rope_sections, (std::array<uint32_t, 4>{11, 11, 10, 0}));  // Qwen3.5's own
  EXPECT_EQ(medium.ssm_time_step_rank, 2 * medium.ssm_group_count);
}

TEST(RandomModelPreset, Qwen35MoePresetsGetExpertsAndASharedExpert) {
  for (Arch arch : {Arch::kQwen35Moe, Arch::kQwen3Next}) {
    for (const char* name : {"tiny", "small", "medium"}) {
      auto s = random_model_preset(name, arch);
      ASSERT_TRUE(s.has_value());
      apply_moe_preset(name, *s);
      EXPECT_TRUE(validate_spec(*s).ok()) << name << ": " << validate_spec(*s).to_string();
      EXPECT_GT(s->num_experts, 0u);
      EXPECT_EQ(s->shared_expert_feed_forward_length, s->expert_feed_forward_length);
    }
    RandomModelSpec s = *random_model_preset("tiny", arch);
    apply_moe_preset("tiny", s);
    s.shared_expert_feed_forward_length = 0;
    EXPECT_NE(validate_spec(s).message().find(std::string(arch_name(arch)) + " always has its shared expert"),
              std::string::npos);
  }
}

// llama.cpp's qwen3next loader: qwen35moe's keys without rope sections, and
// ssm_ba (quantized as a matrix) where qwen35 has ssm_beta and ssm_alpha.
TEST(RandomModel, Qwen3NextFileCarriesLlamaCppsKeysAndSsmBa) {
  testing::TempDir dir;
  RandomModelSpec s = *random_model_preset("tiny", Arch::kQwen3Next);
  apply_moe_preset("tiny", s);
  s.dtype = GgmlType::kQ8_0;
  s.vocab_size = 1024;
  auto made = make_random_model(s, dir.file("m.gguf"));
  ASSERT_TRUE(made.ok()) << made.status().to_string();
  auto f = GgufFile::open(dir.file("m.gguf"));
  ASSERT_TRUE(f.ok());
  const GgufMetadata& md = f->metadata();
  EXPECT_EQ(*md.get_string("general.architecture"), "qwen3next");
  EXPECT_FALSE(md.contains("qwen3next.rope.dimension_sections"));
  EXPECT_EQ(*md.get_u32("qwen3next.expert_count"), 8u);
  EXPECT_EQ(*md.get_u32("qwen3next.full_attention_interval"), 4u);
  const GgufTensorInfo* ba = f->find_tensor("blk.0.ssm_ba.weight");
  ASSERT_NE(ba, nullptr);
  EXPECT_EQ(ba->type, GgmlType::kQ8_0);
  EXPECT_EQ(ba->shape, (std::vector<uint64_t>{s.embedding_length, 2 * uint64_t{s.ssm_time_step_rank}}));
  EXPECT_EQ(f->find_tensor("blk.0.ssm_beta.weight"), nullptr);
  auto hp = read_hparams(md);
  ASSERT_TRUE(hp.ok()) << hp.status().to_string();
  EXPECT_TRUE(hp->ssm_grouped_v_heads);
  EXPECT_EQ(arch_tensors(Arch::kQwen3Next, *hp, false).size(), f->tensors().size());
}

TEST(RandomModelPreset, ImropeSectionsRotateEveryPair) {
  EXPECT_EQ(imrope_sections(64), (std::array<uint32_t, 4>{11, 11, 10, 0}));
  EXPECT_EQ(imrope_sections(16), (std::array<uint32_t, 4>{3, 3, 2, 0}));
  EXPECT_EQ(imrope_sections(32), (std::array<uint32_t, 4>{6, 5, 5, 0}));
}

// The keys llama.cpp's qwen35 loader reads, with the values a tiny preset
// writes; block_count counts the MTP block.
// mtp_copies_last_layer: the MTP block's layer tensors hold the trunk's last
// attention layer's values, and eh_proj passes the embedding half through;
// branch_scale scales the layers' output projections only.
TEST(RandomModel, AnMtpBlockCanCopyTheLastAttentionLayerAndBranchesCanBeScaled) {
  testing::TempDir dir;
  RandomModelSpec s = *random_model_preset("tiny", Arch::kQwen35);
  s.mtp_copies_last_layer = true;
  s.branch_scale = 0.25f;
  s.dtype = GgmlType::kF32;
  ASSERT_TRUE(make_random_model(s, dir.file("copy.gguf")).ok());
  s.mtp_copies_last_layer = false;
  s.branch_scale = 1.0f;
  ASSERT_TRUE(make_random_model(s, dir.file("plain.gguf")).ok());
  auto copy = GgufFile::open(dir.file("copy.gguf"));
  auto plain = GgufFile::open(dir.file("plain.gguf"));
  ASSERT_TRUE(copy.ok() && plain.ok());
  const ModelHParams hp = spec_hparams(s);
  uint32_t last = hp.num_layers - 1;
  while (hp.layer_is_recurrent(last)) --last;
  auto values = [](const GgufFile& f, const std::string& name) {
    const GgufTensorInfo* t = f.find_tensor(name);
    EXPECT_NE(t, nullptr) << name;
    return t == nullptr ? std::vector<float>() : dequantize(f, *t);
  };
  const std::string mtp = "blk." + std::to_string(hp.num_layers) + ".";
  const std::string trunk = "blk." + std::to_string(last) + ".";
  for (const char* name : {"attn_q.weight", "attn_k.weight", "ffn_up.weight", "attn_output.weight"}) {
    EXPECT_EQ(values(*copy, mtp + name), values(*copy, trunk + name)) << name;
    EXPECT_NE(values(*plain, mtp + name), values(*plain, trunk + name)) << name;
  }
  const std::vector<float> eh = values(*copy, mtp + "nextn.eh_proj.weight");
  const size_t embd = hp.embedding_length;
  ASSERT_EQ(eh.size(), 2 * embd * embd);
  for (size_t r = 0; r < embd; ++r) {
    for (size_t c = 0; c < 2 * embd; ++c) ASSERT_EQ(eh[r * 2 * embd + c], c == r ? 1.0f : 0.0f) << r << "," << c;
  }
  const std::vector<float> scaled = values(*copy, "blk.0.ffn_down.weight");
  const std::vector<float> unscaled = values(*plain, "blk.0.ffn_down.weight");
  ASSERT_EQ(scaled.size(), unscaled.size());
  for (size_t i = 0; i < scaled.size(); ++i) ASSERT_EQ(scaled[i], unscaled[i] * 0.25f) << i;
  EXPECT_EQ(values(*copy, "blk.0.ffn_up.weight"), values(*plain, "blk.0.ffn_up.weight"));
  RandomModelSpec bad = s;
  bad.branch_scale = 0.0f;
  EXPECT_NE(make_random_model(bad, dir.file("bad.gguf")).status().message().find("--branch-scale"),
            std::string::npos);
  bad = s;
  bad.nextn_predict_layers = 0;
  bad.mtp_copies_last_layer = true;
  EXPECT_NE(make_random_model(bad, dir.file("bad.gguf")).status().message().find("--mtp-copy-last-layer"),
            std::string::npos);
}

// successor_head: output.weight's row successor_token(t) is token_embd's
// row t, successor_token is a permutation of the vocab, and a tied output
// is refused.
TEST(RandomModel, ASuccessorHeadHoldsEachTokensEmbeddingAtItsSuccessorsRow) {
  for (const uint32_t vocab : {512u, 600u, 1000u, 32000u}) {
    std::vector<bool> hit(vocab);
    for (uint32_t t = 0; t < vocab; ++t) hit[successor_token(t, vocab)] = true;
    EXPECT_EQ(std::count(hit.begin(), hit.end(), true), vocab) << vocab;
    EXPECT_NE(successor_token(7, vocab), 7u);
  }
  testing::TempDir dir;
  RandomModelSpec s = testing::small_model_spec(Arch::kLlama, GgmlType::kF32);
  s.successor_head = true;
  ASSERT_TRUE(make_random_model(s, dir.file("m.gguf")).ok());
  auto f = GgufFile::open(dir.file("m.gguf"));
  ASSERT_TRUE(f.ok());
  const std::vector<float> embd = dequantize(*f, *f->find_tensor("token_embd.weight"));
  const std::vector<float> out = dequantize(*f, *f->find_tensor("output.weight"));
  const size_t width = s.embedding_length;
  ASSERT_EQ(out.size(), embd.size());
  for (uint32_t t = 0; t < s.vocab_size; ++t) {
    const size_t row = successor_token(t, s.vocab_size);
    ASSERT_TRUE(std::equal(embd.begin() + t * width, embd.begin() + (t + 1) * width, out.begin() + row * width))
        << "token " << t;
  }
  s.tied_output = true;
  EXPECT_NE(make_random_model(s, dir.file("bad.gguf")).status().message().find("--successor-head"),
            std::string::npos);
}

// What the fixture is for: with the layers' branches scaled down, the
// argmax after every position of a prompt is the token's successor, and a
// Q4_0 copy of an F16 model (same seed) picks the same tokens.
TEST(RandomModel, ASuccessorHeadsPicksSurviveQuantization) {
  std::vector<std::vector<TokenId>> picks;
  std::vector<TokenId> prompt;
  for (const GgmlType dtype : {GgmlType::kF16, GgmlType::kQ4_0}) {
    testing::TempDir dir;
    RandomModelSpec s = testing::small_model_spec(Arch::kLlama, dtype);
    s.successor_head = true;
    s.branch_scale = 0.05f;
    auto model = testing::make_and_load(s, dir);
    ASSERT_NE(model, nullptr);
    auto dev = testing::make_test_device(*model);
    ASSERT_NE(dev, nullptr);
    prompt = testing::fixed_prompt(40, s.vocab_size);
    const auto logits = testing::logits_at_every_position(*dev, prompt, 24, 8, testing::block_range(0, 4));
    picks.emplace_back();
    for (const std::vector<float>& l : logits) {
      picks.back().push_back(static_cast<TokenId>(std::max_element(l.begin(), l.end()) - l.begin()));
    }
    for (size_t i = 0; i < prompt.size(); ++i) {
      EXPECT_EQ(picks.back()[i], static_cast<TokenId>(successor_token(static_cast<uint32_t>(prompt[i]),
                                                                       s.vocab_size)))
          << ggml_type_name(dtype) << " position " << i;
    }
  }
  EXPECT_EQ(picks[0], picks[1]);
}

TEST(RandomModel, Qwen35FileCarriesLlamaCppsKeys) {
  testing::TempDir dir;
  RandomModelSpec s = *random_model_preset("tiny", Arch::kQwen35);
  s.dtype = GgmlType::kQ8_0;
  s.vocab_size = 1024;
  auto made = make_random_model(s, dir.file("m.gguf"));
  ASSERT_TRUE(made.ok()) << made.status().to_string();
  auto f = GgufFile::open(dir.file("m.gguf"));
  ASSERT_TRUE(f.ok());
  const GgufMetadata& md = f->metadata();
  EXPECT_EQ(*md.get_string("general.architecture"), "qwen35");
  EXPECT_EQ(*md.get_u32("qwen35.block_count"), 9u);
  EXPECT_EQ(*md.get_u32("qwen35.nextn_predict_layers"), 1u);
  EXPECT_EQ(*md.get_u32("qwen35.ssm.conv_kernel"), 4u);
  EXPECT_EQ(*md.get_u32("qwen35.ssm.inner_size"), 256u);
  EXPECT_EQ(*md.get_u32("qwen35.ssm.state_size"), 64u);
  EXPECT_EQ(*md.get_u32("qwen35.ssm.time_step_rank"), 4u);
  EXPECT_EQ(*md.get_u32("qwen35.ssm.group_count"), 4u);
  EXPECT_EQ(*md.get_u32("qwen35.full_attention_interval"), 4u);
  EXPECT_EQ(*md.get_u32("qwen35.attention.key_length"), 64u);
  EXPECT_EQ(*md.get_u32("qwen35.rope.dimension_count"), 16u);
  EXPECT_EQ(*md.get_int_array("qwen35.rope.dimension_sections"), (std::vector<int64_t>{3, 3, 2, 0}));
  EXPECT_EQ(f->find_tensor("blk.0.ssm_conv1d.weight")->type, GgmlType::kF32);  // never quantized
  EXPECT_EQ(f->find_tensor("blk.0.ssm_a")->type, GgmlType::kF32);
  EXPECT_EQ(f->find_tensor("blk.0.ssm_beta.weight")->type, GgmlType::kQ8_0);
  EXPECT_EQ(f->find_tensor("blk.8.nextn.eh_proj.weight")->type, GgmlType::kQ8_0);
  auto hp = read_hparams(md);
  ASSERT_TRUE(hp.ok()) << hp.status().to_string();
  EXPECT_EQ(hp->num_layers, 8u);
  EXPECT_EQ(arch_tensors(Arch::kQwen35, *hp, false).size(), f->tensors().size());
  for (float a : dequantize(*f, *f->find_tensor("blk.4.ssm_a"))) {
    EXPECT_LT(a, -0.13f);
    EXPECT_GE(a, -1.0f);
  }
}


TEST(RandomModelPreset, Mamba2HybridPresetsHaveTheirSizesAndLayerKinds) {
  struct Case {
    Arch arch;
    const char* name;
    double params_m;
    uint32_t layers, mamba, attention;
  };
  for (const Case& c : {Case{Arch::kGraniteHybrid, "tiny", 16.1, 8, 6, 2},
                        Case{Arch::kGraniteHybrid, "small", 135, 12, 10, 2},
                        Case{Arch::kGraniteHybrid, "medium", 495, 24, 21, 3},
                        Case{Arch::kNemotronH, "tiny", 12.5, 9, 4, 1},
                        Case{Arch::kNemotronH, "small", 114, 18, 8, 2},
                        Case{Arch::kNemotronH, "medium", 345, 36, 16, 4}}) {
    auto s = random_model_preset(c.name, c.arch);
    ASSERT_TRUE(s.has_value());
    EXPECT_TRUE(validate_spec(*s).ok()) << validate_spec(*s).to_string();
    EXPECT_NEAR(preset_params(*s) / 1e6, c.params_m, c.params_m * 0.05) << c.name;
    const ModelHParams hp = spec_hparams(*s);
    EXPECT_EQ(hp.num_layers, c.layers) << c.name;
    EXPECT_EQ(hp.num_recurrent_layers(), c.mamba) << c.name;
    EXPECT_EQ(hp.num_attention_layers(), c.attention) << c.name;
    EXPECT_EQ(hp.ssm_inner_size, 2 * hp.embedding_length) << c.name;
    EXPECT_EQ(hp.mamba_head_dim(), 64u) << c.name;
    // Per Mamba2 layer: 3 past inputs of every conv channel, d_state per value of d_inner.
    const uint64_t per_layer = 3ull * hp.conv_dim() + uint64_t{hp.ssm_inner_size} * hp.ssm_state_size;
    EXPECT_EQ(hp.recurrent_state_bytes(), c.mamba * per_layer * 4) << c.name;
  }
  const ModelHParams granite = spec_hparams(*random_model_preset("medium", Arch::kGraniteHybrid));
  EXPECT_FLOAT_EQ(granite.embedding_scale, 12.0f);  // Granite 4.0-H's multipliers
  EXPECT_FLOAT_EQ(granite.attention_scale, 1.0f / 64);
  EXPECT_FALSE(granite.uses_rope);
}

TEST(RandomModelPreset, Mamba2PatternsAreChecked) {
  RandomModelSpec s = *random_model_preset("tiny", Arch::kGraniteHybrid);
  s.layer_pattern = "MM-*";
  EXPECT_NE(validate_spec(s).message().find("--pattern 'MM-*' must be made of 'M*'"), std::string::npos)
      << validate_spec(s).message();
  s.layer_pattern = "MMMMMMMMM*";  // no attention in the first 8 layers
  EXPECT_FALSE(validate_spec(s).ok());
  s.layer_pattern = "M*";
  s.ssm_inner_size = 384;
  EXPECT_NE(validate_spec(s).message().find("twice --embd"), std::string::npos) << validate_spec(s).message();
  s = *random_model_preset("tiny", Arch::kNemotronH);
  s.layer_pattern = "M-*";
  EXPECT_TRUE(validate_spec(s).ok()) << validate_spec(s).message();
}

}  // namespace
}  // namespace met
