// Tests for the model side of qwen35, qwen35moe and qwen3next (hybrid recurrent: gated
// delta layers with a gated attention layer every fourth, an MTP block):
// make_random_model's files read back with the hyper-parameters and tensors
// llama.cpp's loaders read, per preset; Model binds every layer kind and the
// MTP block and names a missing or misshapen recurrent tensor; the
// double-precision reference forward is finite, causal, and matches logits
// llama.cpp computed on the same files. The fast path against the reference:
// hybrid_model_test.cc.
#include <cmath>

#include <gtest/gtest.h>

#include "gguf/gguf_writer.h"
#include "model/cpu_device.h"
#include "model/random_model.h"
#include "testing/model_test_support.h"
#include "testing/reference_forward.h"
#include "testing/temp_dir.h"

namespace met::qwen35_model_test {
namespace {

constexpr uint32_t kVocab = 600;

// testing::hybrid_spec with heads of 32, a context of 256 and seed 35.
RandomModelSpec small_spec(Arch arch, GgmlType dtype) {
  RandomModelSpec s = testing::hybrid_spec(arch, dtype, kVocab);
  s.head_dim = 32;
  s.context_length = 256;
  s.seed = 35;
  return s;
}

std::vector<TokenId> prompt(size_t n) {
  std::vector<TokenId> t;
  for (size_t i = 0; i < n; ++i) t.emplace_back(static_cast<int32_t>((i * 37 + 11) % kVocab));
  return t;
}

class Qwen35Archs : public ::testing::TestWithParam<Arch> {};

TEST_P(Qwen35Archs, MadeModelBindsEachLayerKindAndTheMtpBlock) {
  testing::TempDir dir;
  const RandomModelSpec spec = small_spec(GetParam(), GgmlType::kQ8_0);
  auto m = testing::make_and_load(spec, dir);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->arch(), GetParam());
  const ModelHParams& hp = m->hparams();
  EXPECT_EQ(hp.num_layers, 4u);
  EXPECT_EQ(hp.nextn_predict_layers, 1u);
  EXPECT_EQ(hp.rope_dims, 8u);  // a quarter of the head
  EXPECT_TRUE(m->traits().gated_attention);
  EXPECT_EQ(m->traits().moe, GetParam() != Arch::kQwen35);
  EXPECT_EQ(hp.ssm_grouped_v_heads, GetParam() == Arch::kQwen3Next);
  const auto& layers = m->weights().layers;
  ASSERT_EQ(layers.size(), 4u);
  for (size_t i = 0; i < 3; ++i) {
    const GatedDeltaWeights& g = layers[i].gdn;
    EXPECT_EQ(layers[i].kind, LayerKind::kGatedDelta) << i;
    EXPECT_EQ(g.wqkv.rows, 2 * 2 * 32 + 4 * 32);
    EXPECT_EQ(g.wgate.rows, 4 * 32);
    if (GetParam() == Arch::kQwen3Next) {
      EXPECT_EQ(g.ba.rows, 2 * 4);  // ssm_ba: betas and alphas in one matrix
      EXPECT_EQ(g.beta.data, nullptr);
    } else {
      EXPECT_EQ(g.beta.rows, 4);
      EXPECT_EQ(g.alpha.rows, 4);
      EXPECT_EQ(g.ba.data, nullptr);
    }
    EXPECT_EQ(g.out.rows, 128);
    EXPECT_EQ(g.out.cols, 4 * 32);
    ASSERT_NE(g.conv, nullptr);
    ASSERT_NE(g.a, nullptr);
    EXPECT_LT(g.a[0], 0.0f);
    EXPECT_NE(g.dt_bias, nullptr);
    EXPECT_NE(g.norm, nullptr);
    EXPECT_NE(layers[i].ffn_norm, nullptr);
  }
  EXPECT_EQ(layers[3].kind, LayerKind::kAttention);
  EXPECT_EQ(layers[3].wq.rows, 2 * 2 * 32);  // queries and their gates
  EXPECT_NE(layers[3].q_norm, nullptr);
  ASSERT_EQ(m->weights().mtp.size(), 1u);
  const MtpWeights& mtp = m->weights().mtp[0];
  EXPECT_EQ(mtp.block.kind, LayerKind::kAttention);
  EXPECT_EQ(mtp.block.wq.rows, 2 * 2 * 32);
  EXPECT_EQ(mtp.eh_proj.cols, 2 * 128);
  EXPECT_EQ(mtp.eh_proj.rows, 128);
  EXPECT_NE(mtp.enorm, nullptr);
  EXPECT_NE(mtp.shared_head_norm, m->weights().output_norm);  // the file has its own
  EXPECT_EQ(mtp.shared_head_head.data, m->weights().output.data);  // shared with the trunk
}

TEST_P(Qwen35Archs, MissingRecurrentTensorIsNamed) {
  testing::TempDir dir;
  ASSERT_TRUE(make_random_model(small_spec(GetParam(), GgmlType::kF32), dir.file("m.gguf")).ok());
  testing::rewrite_gguf(dir.file("m.gguf"), dir.file("cut.gguf"), "blk.1.ssm_a");
  auto m = Model::load(dir.file("cut.gguf"));
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("'blk.1.ssm_a' is missing"), std::string::npos) << m.status().message();
}

TEST_P(Qwen35Archs, MisshapenConvKernelIsNamed) {
  testing::TempDir dir;
  ASSERT_TRUE(make_random_model(small_spec(GetParam(), GgmlType::kF32), dir.file("m.gguf")).ok());
  testing::rewrite_gguf(dir.file("m.gguf"), dir.file("bad.gguf"), "", "blk.2.ssm_conv1d.weight", {3, 256});
  auto m = Model::load(dir.file("bad.gguf"));
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("'blk.2.ssm_conv1d.weight' has shape [3, 256], expected [4, 256]"),
            std::string::npos)
      << m.status().message();
}

TEST_P(Qwen35Archs, MissingMtpProjectionIsNamed) {
  testing::TempDir dir;
  ASSERT_TRUE(make_random_model(small_spec(GetParam(), GgmlType::kF32), dir.file("m.gguf")).ok());
  testing::rewrite_gguf(dir.file("m.gguf"), dir.file("cut.gguf"), "blk.4.nextn.eh_proj.weight");
  auto m = Model::load(dir.file("cut.gguf"));
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("blk.4.nextn.eh_proj.weight"), std::string::npos) << m.status().message();
}

TEST_P(Qwen35Archs, ReferenceLogitsAreFiniteVariedAndCausal) {
  testing::TempDir dir;
  auto m = testing::make_and_load(small_spec(GetParam(), GgmlType::kF32), dir);
  ASSERT_NE(m, nullptr);
  const testing::ReferenceForward ref(*m);
  std::vector<TokenId> tokens = prompt(10);
  const auto a = ref.logits(tokens);
  tokens.back() = TokenId{5};
  const auto b = ref.logits(tokens);
  ASSERT_EQ(a.size(), 10u);
  for (size_t pos = 0; pos < a.size(); ++pos) {
    double sum_sq = 0;
    for (float x : a[pos]) {
      ASSERT_TRUE(std::isfinite(x)) << pos;
      sum_sq += double(x) * x;
    }
    const double rms = std::sqrt(sum_sq / a[pos].size());
    EXPECT_GT(rms, 0.1) << pos;  // the head sees a live residual stream
    EXPECT_LT(rms, 100.0) << pos;
    if (pos + 1 < a.size()) {
      EXPECT_EQ(a[pos], b[pos]) << "position " << pos << " saw a later token";
    }
  }
  EXPECT_NE(a.back(), b.back());
  EXPECT_NE(a[0], a[1]);
}

// llama.cpp's logits for prompt(10) on small_spec(arch, F32) (libllama at
// d32676d77 through bench/peer/llama_logits, F32 KV cache, flash attention
// off; the same file from `met make-model --arch qwen35[moe] --layers 4
// --embd 128 --heads 2 --kv-heads 1 --head-dim 32 --ff 256 --vocab 600 --ctx
// 256 --ssm-state 32 --ssm-groups 2 --ssm-heads 4 --mtp-layers 1 --seed 35
// --dtype f32` [--experts 4 --experts-used 2 --expert-ff 64
// --shared-expert-ff 96]; qwen3next: with --arch qwen3next and the experts
// of qwen35moe, at met 31c42b1) at positions 0, 5, 9 and token ids 0, 1, 2,
// 3, 299, 599. Over all 600 logits of all 10 positions the reference was
// within 1.6e-6 of llama.cpp's largest |logit|.
constexpr size_t kGoldenPositions[] = {0, 5, 9};
constexpr size_t kGoldenIds[] = {0, 1, 2, 3, 299, 599};
constexpr float kQwen35Golden[3][6] = {{0.591676f, -0.355134f, 0.443192f, 0.642792f, -0.448559f, 0.357908f},
                                       {0.867479f, 0.796847f, -0.199079f, 1.224256f, 0.039492f, 1.306130f},
                                       {-0.498247f, -1.754090f, -0.950774f, 0.375067f, -1.369513f, -0.284946f}};
constexpr float kQwen35MoeGolden[3][6] = {{1.269228f, -1.019049f, 0.130946f, 2.301062f, 1.929623f, 0.518937f},
                                          {-0.909161f, -0.431646f, 1.030215f, 0.341811f, -0.668017f, 0.589235f},
                                          {1.071615f, 0.982641f, -1.042883f, 1.007007f, 0.912977f, 1.725045f}};
constexpr float kQwen3NextGolden[3][6] = {{0.297869f, -0.188627f, 0.196304f, 0.074660f, -1.294129f, 0.902146f},
                                          {-0.623917f, 0.960454f, 2.373494f, -0.552696f, 0.202698f, -0.585433f},
                                          {0.197863f, -1.381779f, -0.435682f, -1.460142f, 0.390029f, 0.978493f}};

TEST_P(Qwen35Archs, ReferenceLogitsMatchLlamaCppOnTheSameFile) {
  testing::TempDir dir;
  auto m = testing::make_and_load(small_spec(GetParam(), GgmlType::kF32), dir);
  ASSERT_NE(m, nullptr);
  const auto logits = testing::ReferenceForward(*m).logits(prompt(10));
  const auto& golden = GetParam() == Arch::kQwen35      ? kQwen35Golden
                       : GetParam() == Arch::kQwen35Moe ? kQwen35MoeGolden
                                                        : kQwen3NextGolden;
  for (size_t p = 0; p < 3; ++p) {
    for (size_t i = 0; i < 6; ++i) {
      EXPECT_NEAR(logits[kGoldenPositions[p]][kGoldenIds[i]], golden[p][i], 2e-5)
          << "position " << kGoldenPositions[p] << " id " << kGoldenIds[i];
    }
  }
}

// Copies qwen3next file `from` to `to` in the layout llama.cpp's converter
// wrote before attn_qkv and attn_gate: each gated delta layer's ssm_in
// holds, per key head, its q, k, v and z rows.
void write_legacy_ssm_in(const std::string& from, const std::string& to) {
  auto f = GgufFile::open(from);
  ASSERT_TRUE(f.ok());
  auto hp = read_hparams(f->metadata());
  ASSERT_TRUE(hp.ok());
  const uint64_t d = hp->ssm_state_size, key_heads = hp->ssm_group_count;
  const uint64_t values = d * (hp->ssm_time_step_rank / key_heads), key_dim = d * key_heads;
  GgufWriter w;
  for (const auto& [k, v] : f->metadata().entries()) w.set(k, v);
  for (const auto& t : f->tensors()) {
    if (t.name.ends_with("attn_gate.weight")) continue;
    auto bytes = f->tensor_data(t);
    if (!t.name.ends_with("attn_qkv.weight")) {
      ASSERT_TRUE(w.add_tensor_bytes(t.name, t.shape, t.type, {bytes.begin(), bytes.end()}).ok());
      continue;
    }
    const std::string layer = t.name.substr(0, t.name.size() - std::string("attn_qkv.weight").size());
    const GgufTensorInfo* gate = f->find_tensor(layer + "attn_gate.weight");
    ASSERT_NE(gate, nullptr);
    ASSERT_EQ(gate->type, t.type);
    const size_t row = t.num_bytes / t.shape[1];
    auto z = f->tensor_data(*gate);
    std::vector<uint8_t> in;
    auto rows = [&](std::span<const uint8_t> src, uint64_t first, uint64_t n) {
      in.insert(in.end(), src.begin() + static_cast<ptrdiff_t>(first * row),
                src.begin() + static_cast<ptrdiff_t>((first + n) * row));
    };
    for (uint64_t h = 0; h < key_heads; ++h) {
      rows(bytes, h * d, d);                        // q
      rows(bytes, key_dim + h * d, d);              // k
      rows(bytes, 2 * key_dim + h * values, values);  // v
      rows(z, h * values, values);                  // z
    }
    const uint64_t total = t.shape[1] + gate->shape[1];
    ASSERT_TRUE(w.add_tensor_bytes(layer + "ssm_in.weight", {t.shape[0], total}, t.type, std::move(in)).ok());
  }
  ASSERT_TRUE(w.write_file(to).ok());
}

// qwen3next files made before llama.cpp's converter split ssm_in (llama.cpp
// still reads them): the same weights in that layout give the same logits,
// bit for bit, packed (Q8_0) or not (F16).
TEST(Qwen3Next, TheLegacySsmInLayoutRunsAsAttnQkvAndAttnGate) {
  for (GgmlType dtype : {GgmlType::kQ8_0, GgmlType::kF16}) {
    testing::TempDir dir;
    ASSERT_TRUE(make_random_model(small_spec(Arch::kQwen3Next, dtype), dir.file("m.gguf")).ok());
    write_legacy_ssm_in(dir.file("m.gguf"), dir.file("legacy.gguf"));
    auto split = Model::load(dir.file("m.gguf"));
    auto legacy = Model::load(dir.file("legacy.gguf"));
    ASSERT_TRUE(split.ok() && legacy.ok()) << legacy.status().to_string();
    EXPECT_EQ((*legacy)->file().find_tensor("blk.0.attn_qkv.weight"), nullptr);
    EXPECT_NE((*legacy)->file().find_tensor("blk.0.ssm_in.weight"), nullptr);
    const auto tokens = prompt(12);
    auto a = testing::make_test_device(**split);
    auto b = testing::make_test_device(**legacy);
    EXPECT_EQ(testing::logits_at_every_position(*a, tokens, 8, 4, testing::block_range(0, 4)),
              testing::logits_at_every_position(*b, tokens, 8, 4, testing::block_range(0, 4)))
        << ggml_type_name(dtype);
  }
}

INSTANTIATE_TEST_SUITE_P(Archs, Qwen35Archs, ::testing::Values(Arch::kQwen35, Arch::kQwen35Moe, Arch::kQwen3Next),
                         [](const auto& param_info) { return std::string(arch_name(param_info.param)); });

}  // namespace
}  // namespace met::qwen35_model_test
