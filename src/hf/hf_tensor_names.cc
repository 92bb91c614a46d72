// map_hf_tensor_name and permute_rope_rows. Tested by tests/hf/hf_tensor_names_test.cc.
#include "hf/hf_tensor_names.h"

#include <array>
#include <charconv>
#include <cstring>

#include <fmt/format.h>

#include "core/check.h"

namespace met {
namespace {

struct NameRule {
  std::string_view hf_suffix;  // after "model.layers.N."
  std::string_view gguf_suffix;  // after "blk.N."
  HfTensorRole role;
  bool is_key;
};

constexpr std::array<NameRule, 16> kLayerRules = {{
    {"input_layernorm.weight", "attn_norm.weight", HfTensorRole::kPlain, false},
    {"self_attn.q_proj.weight", "attn_q.weight", HfTensorRole::kPermute, false},
    {"self_attn.k_proj.weight", "attn_k.weight", HfTensorRole::kPermute, true},
    {"self_attn.v_proj.weight", "attn_v.weight", HfTensorRole::kPlain, false},
    {"self_attn.o_proj.weight", "attn_output.weight", HfTensorRole::kPlain, false},
    {"self_attn.q_proj.bias", "attn_q.bias", HfTensorRole::kPlain, false},
    {"self_attn.k_proj.bias", "attn_k.bias", HfTensorRole::kPlain, false},
    {"self_attn.v_proj.bias", "attn_v.bias", HfTensorRole::kPlain, false},
    {"self_attn.o_proj.bias", "attn_output.bias", HfTensorRole::kPlain, false},
    {"self_attn.q_norm.weight", "attn_q_norm.weight", HfTensorRole::kPlain, false},
    {"self_attn.k_norm.weight", "attn_k_norm.weight", HfTensorRole::kPlain, false},
    {"post_attention_layernorm.weight", "ffn_norm.weight", HfTensorRole::kPlain, false},
    {"mlp.gate_proj.weight", "ffn_gate.weight", HfTensorRole::kPlain, false},
    {"mlp.up_proj.weight", "ffn_up.weight", HfTensorRole::kPlain, false},
    {"mlp.down_proj.weight", "ffn_down.weight", HfTensorRole::kPlain, false},
    {"self_attn.rotary_emb.inv_freq", "", HfTensorRole::kIgnored, false},
}};


// BERT's layer tensors after "encoder.layer.N.".
constexpr std::array<NameRule, 16> kBertLayerRules = {{
    {"attention.self.query.weight", "attn_q.weight", HfTensorRole::kPlain, false},
    {"attention.self.query.bias", "attn_q.bias", HfTensorRole::kPlain, false},
    {"attention.self.key.weight", "attn_k.weight", HfTensorRole::kPlain, false},
    {"attention.self.key.bias", "attn_k.bias", HfTensorRole::kPlain, false},
    {"attention.self.value.weight", "attn_v.weight", HfTensorRole::kPlain, false},
    {"attention.self.value.bias", "attn_v.bias", HfTensorRole::kPlain, false},
    {"attention.output.dense.weight", "attn_output.weight", HfTensorRole::kPlain, false},
    {"attention.output.dense.bias", "attn_output.bias", HfTensorRole::kPlain, false},
    {"attention.output.LayerNorm.weight", "attn_output_norm.weight", HfTensorRole::kPlain, false},
    {"attention.output.LayerNorm.bias", "attn_output_norm.bias", HfTensorRole::kPlain, false},
    {"intermediate.dense.weight", "ffn_up.weight", HfTensorRole::kPlain, false},
    {"intermediate.dense.bias", "ffn_up.bias", HfTensorRole::kPlain, false},
    {"output.dense.weight", "ffn_down.weight", HfTensorRole::kPlain, false},
    {"output.dense.bias", "ffn_down.bias", HfTensorRole::kPlain, false},
    {"output.LayerNorm.weight", "layer_output_norm.weight", HfTensorRole::kPlain, false},
    {"output.LayerNorm.bias", "layer_output_norm.bias", HfTensorRole::kPlain, false},
}};

// Older BERT checkpoints name a LayerNorm's weight and bias gamma and beta.
std::string modern_norm_name(std::string_view name) {
  std::string s(name);
  if (s.ends_with("LayerNorm.gamma")) s.replace(s.size() - 5, 5, "weight");
  if (s.ends_with("LayerNorm.beta")) s.replace(s.size() - 4, 4, "bias");
  return s;
}

// `rest` is "N.suffix": the rule for suffix in `rules`, as blk.N.<gguf>.
template <size_t kN>
std::optional<HfTensorName> map_numbered(std::string_view rest, const std::array<NameRule, kN>& rules) {
  uint32_t layer = 0;
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), layer);
  if (ec != std::errc() || end == rest.data() || end == rest.data() + rest.size() || *end != '.') return std::nullopt;
  const std::string_view suffix = rest.substr(static_cast<size_t>(end - rest.data()) + 1);
  for (const NameRule& r : rules) {
    if (r.hf_suffix != suffix) continue;
    if (r.role == HfTensorRole::kIgnored) return HfTensorName{"", HfTensorRole::kIgnored, false};
    return HfTensorName{fmt::format("blk.{}.{}", layer, r.gguf_suffix), r.role, r.is_key};
  }
  return std::nullopt;
}

// BERT (BertModel; BertForMaskedLM's under "bert."): the embeddings, the
// encoder layers; the pooler and the masked-LM head are not used.
std::optional<HfTensorName> map_bert_tensor_name(std::string_view hf_name) {
  const std::string modern = modern_norm_name(hf_name);
  std::string_view name = modern;
  if (name.starts_with("bert.")) name.remove_prefix(5);
  if (name.starts_with("pooler.") || name.starts_with("cls.") || name == "embeddings.position_ids") {
    return HfTensorName{"", HfTensorRole::kIgnored, false};
  }
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 5> kEmbeddings = {{
      {"embeddings.word_embeddings.weight", "token_embd.weight"},
      {"embeddings.position_embeddings.weight", "position_embd.weight"},
      {"embeddings.token_type_embeddings.weight", "token_types.weight"},
      {"embeddings.LayerNorm.weight", "token_embd_norm.weight"},
      {"embeddings.LayerNorm.bias", "token_embd_norm.bias"},
  }};
  for (const auto& [hf, gguf] : kEmbeddings) {
    if (name == hf) return HfTensorName{std::string(gguf), HfTensorRole::kPlain, false};
  }
  constexpr std::string_view kLayers = "encoder.layer.";
  if (name.starts_with(kLayers)) return map_numbered(name.substr(kLayers.size()), kBertLayerRules);
  return std::nullopt;
}

}  // namespace

std::optional<HfTensorName> map_hf_tensor_name(std::string_view hf_name, bool encoder) {
  if (encoder) return map_bert_tensor_name(hf_name);
  if (hf_name == "model.embed_tokens.weight") return HfTensorName{"token_embd.weight", HfTensorRole::kPlain, false};
  if (hf_name == "model.norm.weight") return HfTensorName{"output_norm.weight", HfTensorRole::kPlain, false};
  if (hf_name == "lm_head.weight") return HfTensorName{"output.weight", HfTensorRole::kPlain, false};
  constexpr std::string_view kLayers = "model.layers.";
  if (hf_name.starts_with(kLayers)) return map_numbered(hf_name.substr(kLayers.size()), kLayerRules);
  return std::nullopt;
}

std::vector<uint8_t> permute_rope_rows(std::span<const uint8_t> bytes, uint64_t rows, uint64_t row_bytes,
                                       uint32_t num_heads) {
  MET_CHECK(num_heads > 0 && rows % (2 * uint64_t{num_heads}) == 0 && bytes.size() == rows * row_bytes,
            "permute_rope_rows: {} rows of {} bytes in {} bytes for {} heads", rows, row_bytes, bytes.size(),
            num_heads);
  std::vector<uint8_t> out(bytes.size());
  const uint64_t head_rows = rows / num_heads;
  const uint64_t half = head_rows / 2;
  for (uint64_t head = 0; head < num_heads; ++head) {
    for (uint64_t i = 0; i < half; ++i) {
      for (uint64_t h = 0; h < 2; ++h) {
        const uint64_t from = head * head_rows + h * half + i;
        const uint64_t to = head * head_rows + 2 * i + h;
        std::memcpy(out.data() + to * row_bytes, bytes.data() + from * row_bytes, row_bytes);
      }
    }
  }
  return out;
}

}  // namespace met
