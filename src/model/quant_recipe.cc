// llama.cpp's per-tensor quantization mixes. Tested by tests/model/quant_recipe_test.cc.
#include "model/quant_recipe.h"

#include <algorithm>
#include <charconv>

#include "model/file_type.h"

namespace met {
namespace {

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

// Which attention V tensor (0, 1, …) layer `layer`'s is: llama.cpp counts them.
int attn_v_index(const RecipeModel& model, int layer) {
  if (model.attn_v_layers.empty()) return layer;
  const auto it = std::lower_bound(model.attn_v_layers.begin(), model.attn_v_layers.end(), layer);
  return static_cast<int>(it - model.attn_v_layers.begin());
}

// Attention V (or fused QKV), the `index`-th of num_attn_v.
GgmlType attn_v_type(const QuantRecipe& recipe, const RecipeModel& model, int index) {
  switch (recipe.mix) {
    case QuantMix::kQ2_K: return model.gqa >= 4 ? GgmlType::kQ4_K : GgmlType::kQ3_K;
    case QuantMix::kQ3_K_M: return index < 2 ? GgmlType::kQ5_K : GgmlType::kQ4_K;
    case QuantMix::kQ3_K_L: return GgmlType::kQ5_K;
    case QuantMix::kQ4_K_S: return index < 4 ? GgmlType::kQ5_K : recipe.base;
    case QuantMix::kQ4_K_M:
    case QuantMix::kQ5_K_M: return use_more_bits(index, model.num_attn_v) ? GgmlType::kQ6_K : recipe.base;
    case QuantMix::kIq4: return model.gqa >= 4 ? GgmlType::kQ5_K : recipe.base;
    case QuantMix::kPlain:
    case QuantMix::kQ3_K_S:
    case QuantMix::kQ5_K_S: return recipe.base;
  }
  return recipe.base;
}

GgmlType ffn_down_type(const QuantRecipe& recipe, const RecipeModel& model, int layer) {
  const int n = model.num_layers;
  switch (recipe.mix) {
    case QuantMix::kQ2_K: return GgmlType::kQ3_K;
    case QuantMix::kQ3_K_M: return layer < n / 16 ? GgmlType::kQ5_K : GgmlType::kQ4_K;
    case QuantMix::kQ3_K_L: return GgmlType::kQ5_K;
    case QuantMix::kQ4_K_S:
    case QuantMix::kIq4: return layer < n / 8 ? GgmlType::kQ5_K : recipe.base;
    case QuantMix::kQ4_K_M:
    case QuantMix::kQ5_K_M: return use_more_bits(layer, n) ? GgmlType::kQ6_K : recipe.base;
    case QuantMix::kPlain:
    case QuantMix::kQ3_K_S:
    case QuantMix::kQ5_K_S: return recipe.base;
  }
  return recipe.base;
}

GgmlType attn_output_type(const QuantRecipe& recipe, const RecipeModel& model) {
  if (model.num_experts == 8) {
    const bool bumped = recipe.mix != QuantMix::kQ3_K_L && recipe.mix != QuantMix::kQ5_K_S &&
                        recipe.mix != QuantMix::kQ5_K_M;
    return bumped ? GgmlType::kQ5_K : recipe.base;
  }
  switch (recipe.mix) {
    case QuantMix::kQ2_K: return GgmlType::kQ3_K;
    case QuantMix::kQ3_K_M: return GgmlType::kQ4_K;
    case QuantMix::kQ3_K_L: return GgmlType::kQ5_K;
    default: return recipe.base;
  }
}

// llama_tensor_get_type's rules for the K and IQ4 mixes, without an
// importance matrix.
GgmlType mix_type(const QuantRecipe& recipe, const RecipeModel& model, std::string_view name,
                  std::span<const uint64_t> shape) {
  const bool output = name == "output.weight" || (!model.has_output && name == "token_embd.weight");
  if (output) return shape[0] % 256 == 0 ? GgmlType::kQ6_K : GgmlType::kQ8_0;
  const int layer = layer_of(name);
  if (has_part(name, ".attn_v.") || has_part(name, ".attn_qkv.")) {  // fused QKV counts as V
    return model.num_experts == 8 ? GgmlType::kQ8_0 : attn_v_type(recipe, model, attn_v_index(model, layer));
  }
  if (has_part(name, ".attn_k.") && model.num_experts == 8) return GgmlType::kQ8_0;
  if (has_part(name, ".attn_output.")) return attn_output_type(recipe, model);
  if (has_part(name, ".ffn_down")) return ffn_down_type(recipe, model, layer);  // also _exps, _shexp
  return recipe.base;
}

struct NamedMix {
  std::string_view name;
  QuantMix mix;
  GgmlType base;
  uint32_t file_type;  // LLAMA_FTYPE_MOSTLY_*
};

constexpr NamedMix kMixes[] = {
    {"q2_k", QuantMix::kQ2_K, GgmlType::kQ2_K, 10},         {"q3_k_s", QuantMix::kQ3_K_S, GgmlType::kQ3_K, 11},
    {"q3_k_m", QuantMix::kQ3_K_M, GgmlType::kQ3_K, 12},     {"q3_k_l", QuantMix::kQ3_K_L, GgmlType::kQ3_K, 13},
    {"q4_k_s", QuantMix::kQ4_K_S, GgmlType::kQ4_K, 14},     {"q4_k_m", QuantMix::kQ4_K_M, GgmlType::kQ4_K, 15},
    {"q5_k_s", QuantMix::kQ5_K_S, GgmlType::kQ5_K, 16},     {"q5_k_m", QuantMix::kQ5_K_M, GgmlType::kQ5_K, 17},
    {"iq4_nl", QuantMix::kIq4, GgmlType::kIQ4_NL, 25},      {"iq4_xs", QuantMix::kIq4, GgmlType::kIQ4_XS, 30},
};

}  // namespace

std::optional<QuantRecipe> plain_quant_recipe(GgmlType type) {
  const std::optional<uint32_t> file_type = llama_file_type(type);
  if (!file_type) return std::nullopt;
  return QuantRecipe{std::string(ggml_type_name(type)), QuantMix::kPlain, type, *file_type};
}

std::optional<QuantRecipe> find_quant_recipe(std::string_view name) {
  for (const NamedMix& m : kMixes) {
    if (m.name == name) return QuantRecipe{std::string(m.name), m.mix, m.base, m.file_type};
  }
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
