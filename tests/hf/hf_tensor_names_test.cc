// Tests for map_hf_tensor_name and permute_rope_rows (src/hf/hf_tensor_names.h):
// the name table, the permutation against its formula, and against rope
// itself: HF's rotate_half rope over the original rows and GGUF's
// interleaved rope over the permuted rows give the same attention scores.
#include "hf/hf_tensor_names.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "testing/random_data.h"

namespace met {
namespace {

TEST(HfTensorNames, MapsTheLlamaFamilyNamesAsLlamaCppsConverter) {
  const struct {
    const char* hf;
    const char* gguf;
    HfTensorRole role;
  } cases[] = {
      {"model.embed_tokens.weight", "token_embd.weight", HfTensorRole::kPlain},
      {"model.norm.weight", "output_norm.weight", HfTensorRole::kPlain},
      {"lm_head.weight", "output.weight", HfTensorRole::kPlain},
      {"model.layers.0.input_layernorm.weight", "blk.0.attn_norm.weight", HfTensorRole::kPlain},
      {"model.layers.12.self_attn.q_proj.weight", "blk.12.attn_q.weight", HfTensorRole::kPermute},
      {"model.layers.3.self_attn.k_proj.weight", "blk.3.attn_k.weight", HfTensorRole::kPermute},
      {"model.layers.3.self_attn.v_proj.weight", "blk.3.attn_v.weight", HfTensorRole::kPlain},
      {"model.layers.3.self_attn.o_proj.weight", "blk.3.attn_output.weight", HfTensorRole::kPlain},
      {"model.layers.3.self_attn.q_proj.bias", "blk.3.attn_q.bias", HfTensorRole::kPlain},
      {"model.layers.3.self_attn.k_norm.weight", "blk.3.attn_k_norm.weight", HfTensorRole::kPlain},
      {"model.layers.1.post_attention_layernorm.weight", "blk.1.ffn_norm.weight", HfTensorRole::kPlain},
      {"model.layers.1.mlp.gate_proj.weight", "blk.1.ffn_gate.weight", HfTensorRole::kPlain},
      {"model.layers.1.mlp.up_proj.weight", "blk.1.ffn_up.weight", HfTensorRole::kPlain},
      {"model.layers.1.mlp.down_proj.weight", "blk.1.ffn_down.weight", HfTensorRole::kPlain},
      {"model.layers.1.self_attn.rotary_emb.inv_freq", "", HfTensorRole::kIgnored},
  };
  for (const auto& c : cases) {
    const std::optional<HfTensorName> n = map_hf_tensor_name(c.hf);
    ASSERT_TRUE(n.has_value()) << c.hf;
    EXPECT_EQ(n->gguf_name, c.gguf);
    EXPECT_EQ(n->role, c.role) << c.hf;
  }
  EXPECT_TRUE(map_hf_tensor_name("model.layers.3.self_attn.k_proj.weight")->is_key);
  EXPECT_FALSE(map_hf_tensor_name("model.layers.3.self_attn.q_proj.weight")->is_key);
  for (const char* unknown : {"model.layers.x.mlp.up_proj.weight", "model.layers.1", "transformer.h.0.attn.weight",
                              "model.layers.1.mlp.experts.0.weight", "model.layers.1.mlp.up_proj.weights"}) {
    EXPECT_FALSE(map_hf_tensor_name(unknown).has_value()) << unknown;
  }
}

TEST(PermuteRopeRows, MovesEachRowWhereTheFormulaSays) {
  constexpr uint64_t kHeads = 3, kHeadDim = 8, kRows = kHeads * kHeadDim, kCols = 5;
  std::vector<float> w(kRows * kCols);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i);
  std::vector<uint8_t> bytes(w.size() * 4);
  std::memcpy(bytes.data(), w.data(), bytes.size());
  const std::vector<uint8_t> out = permute_rope_rows(bytes, kRows, kCols * 4, kHeads);
  std::vector<float> p(w.size());
  std::memcpy(p.data(), out.data(), out.size());
  // convert_hf_to_gguf: w.reshape(heads, 2, head_dim / 2, cols).swapaxes(1, 2): out[h][i][j] = in[h][j][i].
  for (uint64_t h = 0; h < kHeads; ++h) {
    for (uint64_t i = 0; i < kHeadDim / 2; ++i) {
      for (uint64_t j = 0; j < 2; ++j) {
        for (uint64_t c = 0; c < kCols; ++c) {
          EXPECT_EQ(p[(h * kHeadDim + 2 * i + j) * kCols + c], w[(h * kHeadDim + j * kHeadDim / 2 + i) * kCols + c]);
        }
      }
    }
  }
}

// HF's rope: dim i (< d/2) pairs with i + d/2 (rotate_half).
std::vector<double> rope_half(std::vector<double> x, int pos, double theta) {
  const size_t d = x.size();
  std::vector<double> out(d);
  for (size_t i = 0; i < d / 2; ++i) {
    const double a = pos * std::pow(theta, -2.0 * i / d);
    out[i] = x[i] * std::cos(a) - x[i + d / 2] * std::sin(a);
    out[i + d / 2] = x[i + d / 2] * std::cos(a) + x[i] * std::sin(a);
  }
  return out;
}

// GGUF's (llama.cpp's normal) rope: dim 2i pairs with 2i + 1.
std::vector<double> rope_interleaved(std::vector<double> x, int pos, double theta) {
  const size_t d = x.size();
  std::vector<double> out(d);
  for (size_t i = 0; i < d / 2; ++i) {
    const double a = pos * std::pow(theta, -2.0 * i / d);
    out[2 * i] = x[2 * i] * std::cos(a) - x[2 * i + 1] * std::sin(a);
    out[2 * i + 1] = x[2 * i + 1] * std::cos(a) + x[2 * i] * std::sin(a);
  }
  return out;
}

// One head's rows of `w` (rows × cols, F32 bytes) times x.
std::vector<double> head_times(const std::vector<uint8_t>& w, uint64_t head, uint64_t head_dim, uint64_t cols,
                               const std::vector<float>& x) {
  std::vector<double> out(head_dim);
  for (uint64_t r = 0; r < head_dim; ++r) {
    for (uint64_t c = 0; c < cols; ++c) {
      float v;
      std::memcpy(&v, w.data() + ((head * head_dim + r) * cols + c) * 4, 4);
      out[r] += static_cast<double>(v) * x[c];
    }
  }
  return out;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

TEST(PermuteRopeRows, InterleavedRopeOverPermutedRowsScoresAsRotateHalfOverTheOriginal) {
  constexpr uint64_t kHeads = 4, kKvHeads = 2, kHeadDim = 16, kCols = 12;
  std::mt19937 rng(3);
  met::testing::UniformFloat dist(-1, 1);
  auto random_bytes = [&](uint64_t n) {
    std::vector<float> v(n);
    for (float& f : v) f = dist(rng);
    std::vector<uint8_t> b(n * 4);
    std::memcpy(b.data(), v.data(), b.size());
    return b;
  };
  const std::vector<uint8_t> wq = random_bytes(kHeads * kHeadDim * kCols);
  const std::vector<uint8_t> wk = random_bytes(kKvHeads * kHeadDim * kCols);
  const std::vector<uint8_t> pq = permute_rope_rows(wq, kHeads * kHeadDim, kCols * 4, kHeads);
  const std::vector<uint8_t> pk = permute_rope_rows(wk, kKvHeads * kHeadDim, kCols * 4, kKvHeads);
  std::vector<float> x(kCols), y(kCols);
  for (float& f : x) f = dist(rng);
  for (float& f : y) f = dist(rng);
  for (uint64_t h = 0; h < kHeads; ++h) {
    const uint64_t kv = h / (kHeads / kKvHeads);
    for (const auto& [qpos, kpos] : {std::pair{5, 2}, std::pair{17, 0}, std::pair{3, 3}}) {
      const double hf = dot(rope_half(head_times(wq, h, kHeadDim, kCols, x), qpos, 10000.0),
                            rope_half(head_times(wk, kv, kHeadDim, kCols, y), kpos, 10000.0));
      const double gguf = dot(rope_interleaved(head_times(pq, h, kHeadDim, kCols, x), qpos, 10000.0),
                              rope_interleaved(head_times(pk, kv, kHeadDim, kCols, y), kpos, 10000.0));
      EXPECT_NEAR(gguf, hf, 1e-9) << "head " << h << " positions " << qpos << ", " << kpos;
    }
  }
}

}  // namespace
}  // namespace met

namespace met {
namespace {

TEST(HfTensorNames, BertNamesMapAsLlamaCppsConverterMapsThem) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"embeddings.word_embeddings.weight", "token_embd.weight"},
      {"bert.embeddings.position_embeddings.weight", "position_embd.weight"},
      {"embeddings.token_type_embeddings.weight", "token_types.weight"},
      {"embeddings.LayerNorm.weight", "token_embd_norm.weight"},
      {"embeddings.LayerNorm.beta", "token_embd_norm.bias"},
      {"encoder.layer.2.attention.self.query.weight", "blk.2.attn_q.weight"},
      {"encoder.layer.2.attention.self.key.bias", "blk.2.attn_k.bias"},
      {"encoder.layer.2.attention.self.value.weight", "blk.2.attn_v.weight"},
      {"encoder.layer.2.attention.output.dense.bias", "blk.2.attn_output.bias"},
      {"encoder.layer.2.attention.output.LayerNorm.gamma", "blk.2.attn_output_norm.weight"},
      {"bert.encoder.layer.11.intermediate.dense.weight", "blk.11.ffn_up.weight"},
      {"encoder.layer.0.output.dense.bias", "blk.0.ffn_down.bias"},
      {"encoder.layer.0.output.LayerNorm.bias", "blk.0.layer_output_norm.bias"},
  };
  for (const auto& [hf, gguf] : cases) {
    const std::optional<HfTensorName> n = map_hf_tensor_name(hf, /*encoder=*/true);
    ASSERT_TRUE(n.has_value()) << hf;
    EXPECT_EQ(n->gguf_name, gguf) << hf;
    EXPECT_EQ(n->role, HfTensorRole::kPlain) << hf;
  }
  for (const char* ignored : {"pooler.dense.weight", "cls.predictions.bias", "embeddings.position_ids"}) {
    EXPECT_EQ(map_hf_tensor_name(ignored, true)->role, HfTensorRole::kIgnored) << ignored;
  }
  EXPECT_FALSE(map_hf_tensor_name("encoder.layer.0.crossattention.self.query.weight", true).has_value());
  EXPECT_FALSE(map_hf_tensor_name("embeddings.word_embeddings.weight").has_value()) << "not a llama name";
}

}  // namespace
}  // namespace met
