// Quantization recipes: the type `met quantize` gives each tensor. A plain
// type puts every weight matrix in it (file_type_matrix_type); a mix is
// llama.cpp's LLAMA_FTYPE_MOSTLY_*_M choice (llama_tensor_get_type in its
// src/llama-quant.cpp, without an importance matrix), so the files met writes
// are the files users download. Every mix puts the output matrix (or the
// token embeddings where the model ties them) in Q6_K, and with 8 experts
// attention K and V in Q8_0 and attention output in Q5_K (not q3_k_l,
// q5_k_s, q5_k_m). Attention V (or fused QKV) / FFN down / attention output:
//   q2_k:   Q3_K (Q4_K where 4 or more query heads share a KV head) / Q3_K / Q3_K
//   q3_k_s: Q3_K throughout
//   q3_k_m: Q5_K in the first two V, then Q4_K / Q5_K in the first 16th of
//           the layers, then Q4_K / Q4_K
//   q3_k_l: Q5_K / Q5_K / Q5_K
//   q4_k_s: Q5_K in the first four V / Q5_K in the first eighth
//   q4_k_m, q5_k_m: Q6_K in "more bits" layers (the first and last eighth
//           and every third between: use_more_bits) for V and FFN down
//   q5_k_s: Q5_K throughout
//   iq4_nl / iq4_xs: Q5_K where 4 or more query heads share a KV head / Q5_K
//           in the first eighth of the layers
// Where a row length does not fit the chosen type's block, quantize_model
// falls back as llama.cpp does (row_fallback_type), then to F16.
// Threading: pure functions. Tested by tests/model/quant_recipe_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/ggml_type.h"

namespace met {

enum class QuantMix : uint8_t { kPlain, kQ2_K, kQ3_K_S, kQ3_K_M, kQ3_K_L, kQ4_K_S, kQ4_K_M, kQ5_K_S, kQ5_K_M, kIq4 };

struct QuantRecipe {
  std::string name;    // "q4_k_m", or the plain type's name
  QuantMix mix = QuantMix::kPlain;
  GgmlType base = GgmlType::kF16;  // the type of most matrices
  uint32_t file_type = 0;          // general.file_type (LLAMA_FTYPE_*)
};

// A plain type's recipe, or nullopt where no file type describes it.
std::optional<QuantRecipe> plain_quant_recipe(GgmlType type);
// A mix ("q2_k", "q3_k_s", "q3_k_m", "q3_k_l", "q4_k_s", "q4_k_m", "q5_k_s",
// "q5_k_m", "iq4_nl", "iq4_xs") or a type name ("q8_0", "q6_k" …).
std::optional<QuantRecipe> find_quant_recipe(std::string_view name);

// What a mix needs to know of the model, read once from its file.
struct RecipeModel {
  int num_layers = 0;      // <arch>.block_count
  int num_attn_v = 0;      // attn_v / attn_qkv tensors
  int num_experts = 0;     // <arch>.expert_count, 0 for a dense model
  bool has_output = true;  // false: the output reuses token_embd (tied)
  int gqa = 1;             // query heads per KV head
  // The layers holding attn_v / attn_qkv, ascending, where not every layer
  // does (a hybrid's attention layers); empty: layer i holds the i-th.
  std::vector<int> attn_v_layers;
};

// The type for the matrix `name` of `shape` (ggml order). REQUIRES: `name` is
// a weight matrix quantize_model rewrites.
GgmlType recipe_tensor_type(const QuantRecipe& recipe, const RecipeModel& model, std::string_view name,
                            std::span<const uint64_t> shape);

// llama.cpp's type for a row that does not fit `type`'s block (its
// tensor_type_fallback): a 32-element type of about the same size (Q4_K ->
// Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0, IQ4_XS -> IQ4_NL, Q2_K and Q3_K -> Q4_0),
// Q8_0 for the rest.
GgmlType row_fallback_type(GgmlType type);

}  // namespace met
