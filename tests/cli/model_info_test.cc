// Tests for ModelInfo (src/cli/model_info.h).
#include "cli/model_info.h"

#include <gtest/gtest.h>

#include <tuple>

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

TEST(ModelInfo, GptOssShowsItsWindowedLayers) {
  testing::TempDir dir;
  RandomModelSpec s;
  s.arch = Arch::kGptOss;
  s.num_layers = 5;
  s.embedding_length = 128;
  s.num_heads = 4;
  s.num_kv_heads = 2;
  s.feed_forward_length = 256;
  s.vocab_size = 600;
  s.num_experts = 4;
  s.num_experts_used = 2;
  s.expert_feed_forward_length = 64;
  s.sliding_window = 32;
  s.swa_pattern = 3;  // layers 0, 1, 3, 4 windowed (i % 3 < 2)
  ASSERT_TRUE(make_random_model(s, dir.file("m.gguf")).ok());
  auto info = info_of(dir.file("m.gguf"));
  ASSERT_TRUE(info.ok()) << info.status().to_string();
  const auto j = model_info_json(*info);
  EXPECT_EQ(j["hparams"]["sliding_window"]["window"], 32);
  EXPECT_EQ(j["hparams"]["sliding_window"]["layers"], nlohmann::json::parse("[0, 1, 3, 4]"));
  const std::string text = render_model_info_text(*info);
  EXPECT_NE(text.find("32 positions on 4 of 5 layers (pattern 3)"), std::string::npos) << text;
}

RandomModelSpec small_hybrid_spec(Arch arch) {
  RandomModelSpec s = *random_model_preset("tiny", arch);
  s.vocab_size = 600;
  apply_moe_preset("tiny", s);
  return s;
}

TEST(ModelInfo, Qwen35ShowsLayerKindsMtpAndStateBytes) {
  testing::TempDir dir;
  ASSERT_TRUE(make_random_model(small_hybrid_spec(Arch::kQwen35), dir.file("m.gguf")).ok());
  auto info = info_of(dir.file("m.gguf"));
  ASSERT_TRUE(info.ok()) << info.status().to_string();
  ASSERT_TRUE(info->hparams.has_value()) << info->hparams_error;
  const uint64_t state = 6 * (3 * 768 + 4 * 64 * 64) * 4;  // 6 recurrent layers, float32
  const std::string text = render_model_info_text(*info);
  EXPECT_NE(text.find("layers         8 (6 gated delta, 2 attention) + 1 MTP\n"), std::string::npos) << text;
  EXPECT_NE(text.find("recurrent state 438.0 KiB (" + std::to_string(state) + " bytes) per sequence"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("sections [3, 3, 2, 0]"), std::string::npos) << text;
  const auto j = model_info_json(*info);
  EXPECT_EQ(j["hparams"]["layers"], 8);
  EXPECT_EQ(j["hparams"]["mtp_layers"], 1);
  EXPECT_EQ(j["hparams"]["gated_delta"]["layers"], nlohmann::json::parse("[0, 1, 2, 4, 5, 6]"));
  EXPECT_EQ(j["hparams"]["gated_delta"]["state_bytes_per_sequence"], state);
  EXPECT_EQ(j["hparams"]["gated_delta"]["value_heads"], 4);
  EXPECT_EQ(j["hparams"]["rope"]["sections"], nlohmann::json::parse("[3, 3, 2, 0]"));
}

// The MTP block's experts count like the trunk's: the active parameters
// leave out every expert tensor's unused experts.
TEST(ModelInfo, Qwen35MoeActiveParametersLeaveOutUnusedExpertsOfEveryBlock) {
  testing::TempDir dir;
  const RandomModelSpec s = small_hybrid_spec(Arch::kQwen35Moe);
  ASSERT_TRUE(make_random_model(s, dir.file("m.gguf")).ok());
  auto info = info_of(dir.file("m.gguf"));
  ASSERT_TRUE(info.ok());
  const uint64_t blocks = s.num_layers + s.nextn_predict_layers;
  const uint64_t unused = blocks * (s.num_experts - s.num_experts_used) * 3 * s.embedding_length *
                          s.expert_feed_forward_length;
  EXPECT_EQ(info->active_params, info->num_params - unused);
  const std::string text = render_model_info_text(*info);
  EXPECT_NE(text.find("shared expert"), std::string::npos) << text;
  EXPECT_NE(text.find("(6 gated delta, 2 attention) + 1 MTP"), std::string::npos) << text;
}

// The bytes of a tensor from its shape and type alone: rows of shape[0]
// elements in the type's blocks.
uint64_t tensor_bytes(const GgufTensorInfo& t, uint64_t rows_read) {
  return *ggml_row_bytes(t.type, t.shape[0]) * rows_read;
}

uint64_t all_rows(const GgufTensorInfo& t) {
  uint64_t rows = 1;
  for (size_t d = 1; d < t.shape.size(); ++d) rows *= t.shape[d];
  return rows;
}

bool is_routed_expert_matrix(const std::string& name) {
  return name.ends_with(".ffn_gate_exps.weight") || name.ends_with(".ffn_up_exps.weight") ||
         name.ends_with(".ffn_down_exps.weight");
}

RandomModelSpec small_moe_spec(Arch arch, GgmlType dtype, uint32_t shared_ff) {
  RandomModelSpec s;
  s.arch = arch;
  s.num_layers = 3;
  s.embedding_length = 128;
  s.num_heads = 4;
  s.num_kv_heads = 2;
  s.feed_forward_length = 256;
  s.vocab_size = 600;
  s.dtype = dtype;
  s.num_experts = 8;
  s.num_experts_used = 3;
  s.expert_feed_forward_length = 64;
  s.shared_expert_feed_forward_length = shared_ff;
  return s;
}

TEST(ModelInfo, ActiveBytesOfAMoeModelCountTheUsedExpertsAndOneEmbeddingRow) {
  for (auto [arch, dtype, shared] : {std::tuple{Arch::kQwen3Moe, GgmlType::kQ8_0, 96u},
                                     std::tuple{Arch::kQwen3Moe, GgmlType::kF16, 0u},
                                     std::tuple{Arch::kMixtral, GgmlType::kQ4_K, 0u}}) {
    testing::TempDir dir;
    const RandomModelSpec spec = small_moe_spec(arch, dtype, shared);
    ASSERT_TRUE(make_random_model(spec, dir.file("m.gguf")).ok());
    auto f = GgufFile::open(dir.file("m.gguf"));
    ASSERT_TRUE(f.ok());
    uint64_t want = 0;
    int num_expert_tensors = 0;
    for (const GgufTensorInfo& t : f->tensors()) {
      if (t.name == "token_embd.weight") {
        want += tensor_bytes(t, 1);
      } else if (is_routed_expert_matrix(t.name)) {
        ASSERT_EQ(t.shape.size(), 3u) << t.name;
        want += tensor_bytes(t, t.shape[1] * spec.num_experts_used);
        ++num_expert_tensors;
      } else {
        want += tensor_bytes(t, all_rows(t));
      }
    }
    EXPECT_EQ(num_expert_tensors, 3 * 3);
    auto info = gather_model_info(*f, dir.file("m.gguf"));
    ASSERT_TRUE(info.ok());
    EXPECT_EQ(info->active_bytes, want) << arch_name(arch) << " " << ggml_type_name(dtype);
    EXPECT_EQ(active_bytes_per_token(f->tensors(), &*info->hparams), want);
    EXPECT_EQ(model_info_json(*info)["active_bytes"], want);
    EXPECT_NE(render_model_info_text(*info).find("read per token "), std::string::npos);
  }
}

// F32 makes the unread bytes plain arithmetic: the unused experts' three
// matrices per layer and all embedding rows but one.
TEST(ModelInfo, ActiveBytesOfAnF32MoeModelLeaveOutTheUnusedExpertsExactly) {
  testing::TempDir dir;
  const RandomModelSpec s = small_moe_spec(Arch::kQwen3Moe, GgmlType::kF32, 0);
  ASSERT_TRUE(make_random_model(s, dir.file("m.gguf")).ok());
  auto info = info_of(dir.file("m.gguf"));
  ASSERT_TRUE(info.ok());
  uint64_t all = 0;
  for (const auto& [name, d] : info->by_dtype) all += d.num_bytes;
  const uint64_t unused_experts = uint64_t{s.num_layers} * (s.num_experts - s.num_experts_used) * 3 *
                                  s.embedding_length * s.expert_feed_forward_length * 4;
  const uint64_t unread_embedding = uint64_t{s.vocab_size - 1} * s.embedding_length * 4;
  EXPECT_EQ(info->active_bytes, all - unused_experts - unread_embedding);
}

// A 2-layer F32 llama: 128 wide, 4 heads over 2 kv heads, 256 feed-forward,
// 600 tokens; its output head tied to the embedding or not.
RandomModelSpec small_dense_spec(bool tied) {
  RandomModelSpec s;
  s.num_layers = 2;
  s.embedding_length = 128;
  s.num_heads = 4;
  s.num_kv_heads = 2;
  s.feed_forward_length = 256;
  s.vocab_size = 600;
  s.tied_output = tied;
  return s;
}

// A dense model's count is what `met bench` used before MoE: all bytes but
// the embedding rows a token does not read; a tied head reads them all.
TEST(ModelInfo, ActiveBytesOfADenseModelAreAllButTheUnreadEmbeddingRows) {
  for (bool tied : {false, true}) {
    testing::TempDir dir;
    const RandomModelSpec s = small_dense_spec(tied);
    ASSERT_TRUE(make_random_model(s, dir.file("m.gguf")).ok());
    auto info = info_of(dir.file("m.gguf"));
    ASSERT_TRUE(info.ok());
    uint64_t all = 0;
    for (const auto& [name, d] : info->by_dtype) all += d.num_bytes;
    const uint64_t row = uint64_t{s.embedding_length} * 4;
    EXPECT_EQ(info->active_bytes, tied ? all + row : all - (s.vocab_size - 1) * row) << "tied " << tied;
  }
}

// The MACs a token's matmuls need, from the dimensions: per layer q and o
// (E x E), k and v (E x the kv heads' width), gate, up and down (E x F); the
// output head (E x vocab) whether its own or tied to the embedding; a MoE
// layer's experts k of n.
TEST(ModelInfo, MatmulMacsPerTokenCountEveryWeightOnceAndTheUsedExperts) {
  for (bool tied : {false, true}) {
    testing::TempDir dir;
    const RandomModelSpec s = small_dense_spec(tied);
    ASSERT_TRUE(make_random_model(s, dir.file("m.gguf")).ok());
    auto f = GgufFile::open(dir.file("m.gguf"));
    ASSERT_TRUE(f.ok());
    const uint64_t e = 128, kv = 2 * (128 / 4);
    const uint64_t want = 2 * (2 * e * e + 2 * e * kv + 3 * e * 256) + e * 600;
    const auto macs = matmul_macs_per_token(f->tensors(), nullptr);
    ASSERT_EQ(macs.size(), 1u) << "tied " << tied;
    EXPECT_EQ(macs.begin()->second, want) << "tied " << tied;
  }
  testing::TempDir dir;
  const RandomModelSpec s = small_moe_spec(Arch::kQwen3Moe, GgmlType::kF32, 0);
  ASSERT_TRUE(make_random_model(s, dir.file("m.gguf")).ok());
  auto f = GgufFile::open(dir.file("m.gguf"));
  ASSERT_TRUE(f.ok());
  auto info = gather_model_info(*f, dir.file("m.gguf"));
  ASSERT_TRUE(info.ok());
  const auto all = matmul_macs_per_token(f->tensors(), nullptr);  // no hparams: every expert
  const auto used = matmul_macs_per_token(f->tensors(), &*info->hparams);
  const uint64_t unused = uint64_t{s.num_layers} * (s.num_experts - s.num_experts_used) * 3 * s.embedding_length *
                          s.expert_feed_forward_length;
  EXPECT_EQ(all.at(GgmlType::kF32) - used.at(GgmlType::kF32), unused);
}

}  // namespace
}  // namespace met
