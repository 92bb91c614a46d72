// llama.cpp's per-tensor quantization mixes. Tested by tests/model/quant_recipe_test.cc.
#include "model/quant_recipe.h"

#include <charconv>

#include "model/file_type.h"

namespace met {
namespace {

constexpr uint32_t kFileTypeQ4_K_M = 15;
constexpr uint32_t kFileTypeQ5_K_M = 17;
constexpr uint32_t kFileTypeIq4_NL = 25;
constexpr uint32_t kFileTypeIq4_XS = 30;

// The layer of "blk.N.…", or -1.
int layer_of(std::string_view name) {
  if (!name.starts_with("blk.")) return -1;
  name.remove_prefix(4);
  int layer = -1;
  const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), layer);
  return ec == std::errc() && end != name.data() ? layer : -1;
}

// llama.cpp's use_more_bits: the first and last eighth, and every third layer between.
bool use_more_bits(int layer, int num_layers) {
  return layer < num_layers / 8 || layer >= 7 * num_layers / 8 || (layer - num_layers / 8) % 3 == 2;
}

bool has_part(std::string_view name, std::string_view part) { return name.find(part) != std::string_view::npos; }

// llama_tensor_get_type's rules for the K and IQ4 mixes, without an
// importance matrix.
GgmlType mix_type(const QuantRecipe& recipe, const RecipeModel& model, std::string_view name,
                  std::span<const uint64_t> shape) {
  const bool output = name == "output.weight" || (!model.has_output && name == "token_embd.weight");
  if (output) return shape[0] % 256 == 0 ? GgmlType::kQ6_K : GgmlType::kQ8_0;
  const bool attn_v = has_part(name, ".attn_v.") || has_part(name, ".attn_qkv.");  // fused QKV counts as V
  if (model.num_experts == 8) {
    if (attn_v || has_part(name, ".attn_k.")) return GgmlType::kQ8_0;
    if (has_part(name, ".attn_output.")) return GgmlType::kQ5_K;
  }
  const int layer = layer_of(name);
  const bool k_mix = recipe.mix != QuantMix::kIq4;
  if (attn_v) {
    if (k_mix) return use_more_bits(layer, model.num_attn_v) ? GgmlType::kQ6_K : recipe.base;
    return model.gqa >= 4 ? GgmlType::kQ5_K : recipe.base;
  }
  if (has_part(name, ".ffn_down")) {  // ffn_down, ffn_down_exps, ffn_down_shexp
    if (k_mix) return use_more_bits(layer, model.num_layers) ? GgmlType::kQ6_K : recipe.base;
    return layer < model.num_layers / 8 ? GgmlType::kQ5_K : recipe.base;
  }
  return recipe.base;
}

}  // namespace

std::optional<QuantRecipe> plain_quant_recipe(GgmlType type) {
  const std::optional<uint32_t> file_type = llama_file_type(type);
  if (!file_type) return std::nullopt;
  return QuantRecipe{std::string(ggml_type_name(type)), QuantMix::kPlain, type, *file_type};
}

std::optional<QuantRecipe> find_quant_recipe(std::string_view name) {
  if (name == "q4_k_m") return QuantRecipe{"q4_k_m", QuantMix::kQ4_K_M, GgmlType::kQ4_K, kFileTypeQ4_K_M};
  if (name == "q5_k_m") return QuantRecipe{"q5_k_m", QuantMix::kQ5_K_M, GgmlType::kQ5_K, kFileTypeQ5_K_M};
  if (name == "iq4_nl") return QuantRecipe{"iq4_nl", QuantMix::kIq4, GgmlType::kIQ4_NL, kFileTypeIq4_NL};
  if (name == "iq4_xs") return QuantRecipe{"iq4_xs", QuantMix::kIq4, GgmlType::kIQ4_XS, kFileTypeIq4_XS};
  const std::optional<GgmlType> type = parse_ggml_type(name);
  return type ? plain_quant_recipe(*type) : std::nullopt;
}

GgmlType recipe_tensor_type(const QuantRecipe& recipe, const RecipeModel& model, std::string_view name,
                            std::span<const uint64_t> shape) {
  if (recipe.mix == QuantMix::kPlain) return file_type_matrix_type(recipe.base, shape);
  return mix_type(recipe, model, name, shape);
}

GgmlType row_fallback_type(GgmlType type) {
  switch (type) {
    case GgmlType::kIQ4_XS: return GgmlType::kIQ4_NL;
    case GgmlType::kQ2_K:
    case GgmlType::kQ3_K: return GgmlType::kQ4_0;
    case GgmlType::kQ4_K: return GgmlType::kQ5_0;
    case GgmlType::kQ5_K: return GgmlType::kQ5_1;
    default: return GgmlType::kQ8_0;
  }
}

}  // namespace met
