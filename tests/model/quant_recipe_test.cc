// Tests for quant_recipe.h: llama.cpp's mixes as its llama_tensor_get_type
// (src/llama-quant.cpp) states them, tensor by tensor.
#include "model/quant_recipe.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace met {
namespace {

const std::vector<uint64_t> kMatrix = {1024, 1024};

// A model of `layers` layers with `attn_v` V tensors (one per layer, in order).
RecipeModel model_of(int layers, int attn_v, int experts, bool has_output, int gqa = 1) {
  RecipeModel m;
  m.num_layers = layers;
  m.num_attn_v = attn_v;
  m.num_experts = experts;
  m.has_output = has_output;
  m.gqa = gqa;
  return m;
}

GgmlType type_of(const QuantRecipe& r, const RecipeModel& m, const std::string& name,
                 const std::vector<uint64_t>& shape = kMatrix) {
  return recipe_tensor_type(r, m, name, shape);
}

TEST(QuantRecipe, NamesTheMixesAndEveryPlainTypeWithAFileType) {
  const auto q4km = find_quant_recipe("q4_k_m");
  ASSERT_TRUE(q4km);
  EXPECT_EQ(q4km->base, GgmlType::kQ4_K);
  EXPECT_EQ(q4km->file_type, 15u);  // LLAMA_FTYPE_MOSTLY_Q4_K_M
  const auto q5km = find_quant_recipe("q5_k_m");
  ASSERT_TRUE(q5km);
  EXPECT_EQ(q5km->base, GgmlType::kQ5_K);
  EXPECT_EQ(q5km->file_type, 17u);
  const auto q6k = find_quant_recipe("q6_k");
  ASSERT_TRUE(q6k);
  EXPECT_EQ(q6k->mix, QuantMix::kPlain);
  EXPECT_EQ(q6k->file_type, 18u);
  EXPECT_FALSE(find_quant_recipe("q4_k_x"));
  EXPECT_FALSE(find_quant_recipe("q8_k"));  // no file is "mostly Q8_K"
}

// use_more_bits(i, n): i < n/8, i >= 7n/8, or (i - n/8) % 3 == 2. For 28
// layers: 0-2, 5, 8, 11, 14, 17, 20, 23, and 24-27.
TEST(QuantRecipe, Q4_K_MPutsAttentionVAndFfnDownOfMoreBitsLayersInQ6_K) {
  const QuantRecipe r = *find_quant_recipe("q4_k_m");
  const RecipeModel m = model_of(28, 28, 0, true);
  const std::vector<int> more = {0, 1, 2, 5, 8, 11, 14, 17, 20, 23, 24, 25, 26, 27};
  for (int layer = 0; layer < 28; ++layer) {
    const bool wide = std::find(more.begin(), more.end(), layer) != more.end();
    const std::string blk = "blk." + std::to_string(layer) + ".";
    const GgmlType expect = wide ? GgmlType::kQ6_K : GgmlType::kQ4_K;
    EXPECT_EQ(type_of(r, m, blk + "attn_v.weight"), expect) << layer;
    EXPECT_EQ(type_of(r, m, blk + "ffn_down.weight"), expect) << layer;
    EXPECT_EQ(type_of(r, m, blk + "attn_q.weight"), GgmlType::kQ4_K) << layer;
    EXPECT_EQ(type_of(r, m, blk + "attn_k.weight"), GgmlType::kQ4_K) << layer;
    EXPECT_EQ(type_of(r, m, blk + "attn_output.weight"), GgmlType::kQ4_K) << layer;
    EXPECT_EQ(type_of(r, m, blk + "ffn_gate.weight"), GgmlType::kQ4_K) << layer;
    EXPECT_EQ(type_of(r, m, blk + "ffn_up.weight"), GgmlType::kQ4_K) << layer;
  }
  EXPECT_EQ(type_of(r, m, "blk.3.attn_qkv.weight"), GgmlType::kQ4_K);  // fused QKV counts as V
  EXPECT_EQ(type_of(r, m, "blk.5.attn_qkv.weight"), GgmlType::kQ6_K);
}

TEST(QuantRecipe, Q5_K_MIsQ5_KWithTheSameQ6_KLayers) {
  const QuantRecipe r = *find_quant_recipe("q5_k_m");
  const RecipeModel m = model_of(8, 8, 0, true);  // more bits: 0, 3, 6, 7
  EXPECT_EQ(type_of(r, m, "blk.0.ffn_down.weight"), GgmlType::kQ6_K);
  EXPECT_EQ(type_of(r, m, "blk.1.ffn_down.weight"), GgmlType::kQ5_K);
  EXPECT_EQ(type_of(r, m, "blk.3.attn_v.weight"), GgmlType::kQ6_K);
  EXPECT_EQ(type_of(r, m, "blk.4.attn_v.weight"), GgmlType::kQ5_K);
  EXPECT_EQ(type_of(r, m, "blk.7.ffn_down.weight"), GgmlType::kQ6_K);
  EXPECT_EQ(type_of(r, m, "blk.2.ffn_up.weight"), GgmlType::kQ5_K);
  EXPECT_EQ(type_of(r, m, "token_embd.weight"), GgmlType::kQ5_K);
}

TEST(QuantRecipe, TheOutputIsQ6_KOrQ8_0WhereItsRowsDoNotFitQ6_K) {
  const QuantRecipe r = *find_quant_recipe("q4_k_m");
  const RecipeModel untied = model_of(2, 2, 0, true);
  EXPECT_EQ(type_of(r, untied, "output.weight"), GgmlType::kQ6_K);
  EXPECT_EQ(type_of(r, untied, "output.weight", {288, 32000}), GgmlType::kQ8_0);
  EXPECT_EQ(type_of(r, untied, "token_embd.weight"), GgmlType::kQ4_K);
  // Tied: the embeddings are the output matrix and get its type.
  const RecipeModel tied = model_of(2, 2, 0, false);
  EXPECT_EQ(type_of(r, tied, "token_embd.weight"), GgmlType::kQ6_K);
}

TEST(QuantRecipe, EightExpertModelsKeepAttentionKAndVInQ8_0) {
  const QuantRecipe r = *find_quant_recipe("q4_k_m");
  const RecipeModel m = model_of(32, 32, 8, true);
  EXPECT_EQ(type_of(r, m, "blk.9.attn_v.weight"), GgmlType::kQ8_0);
  EXPECT_EQ(type_of(r, m, "blk.9.attn_k.weight"), GgmlType::kQ8_0);
  EXPECT_EQ(type_of(r, m, "blk.9.attn_output.weight"), GgmlType::kQ5_K);
  EXPECT_EQ(type_of(r, m, "blk.0.ffn_down_exps.weight", {1024, 1024, 8}), GgmlType::kQ6_K);
  EXPECT_EQ(type_of(r, m, "blk.10.ffn_down_exps.weight", {1024, 1024, 8}), GgmlType::kQ4_K);  // (10 - 4) % 3 = 0
}

TEST(QuantRecipe, Iq4_XsWidensAttentionVForGroupedHeadsAndTheFirstEighthsFfnDown) {
  const QuantRecipe r = *find_quant_recipe("iq4_xs");
  EXPECT_EQ(r.file_type, 30u);  // LLAMA_FTYPE_MOSTLY_IQ4_XS
  const RecipeModel grouped = model_of(16, 16, 0, true, 4);
  EXPECT_EQ(type_of(r, grouped, "blk.7.attn_v.weight"), GgmlType::kQ5_K);
  EXPECT_EQ(type_of(r, grouped, "blk.1.ffn_down.weight"), GgmlType::kQ5_K);  // 1 < 16 / 8
  EXPECT_EQ(type_of(r, grouped, "blk.2.ffn_down.weight"), GgmlType::kIQ4_XS);
  EXPECT_EQ(type_of(r, grouped, "blk.15.ffn_down.weight"), GgmlType::kIQ4_XS);
  EXPECT_EQ(type_of(r, grouped, "output.weight"), GgmlType::kQ6_K);
  EXPECT_EQ(type_of(r, grouped, "blk.3.ffn_gate.weight"), GgmlType::kIQ4_XS);
  const RecipeModel pairs = model_of(16, 16, 0, true, 2);
  EXPECT_EQ(type_of(r, pairs, "blk.7.attn_v.weight"), GgmlType::kIQ4_XS);
  EXPECT_EQ(find_quant_recipe("iq4_nl")->base, GgmlType::kIQ4_NL);
}

TEST(QuantRecipe, Q3_K_MWidensTheFirstVsAndFfnDownsAndAttentionOutput) {
  const QuantRecipe r = *find_quant_recipe("q3_k_m");
  EXPECT_EQ(r.file_type, 12u);  // LLAMA_FTYPE_MOSTLY_Q3_K_M
  const RecipeModel m = model_of(32, 32, 0, true);
  EXPECT_EQ(type_of(r, m, "blk.0.attn_v.weight"), GgmlType::kQ5_K);
  EXPECT_EQ(type_of(r, m, "blk.1.attn_v.weight"), GgmlType::kQ5_K);
  EXPECT_EQ(type_of(r, m, "blk.2.attn_v.weight"), GgmlType::kQ4_K);
  EXPECT_EQ(type_of(r, m, "blk.1.ffn_down.weight"), GgmlType::kQ5_K);  // 1 < 32 / 16
  EXPECT_EQ(type_of(r, m, "blk.2.ffn_down.weight"), GgmlType::kQ4_K);
  EXPECT_EQ(type_of(r, m, "blk.31.ffn_down.weight"), GgmlType::kQ4_K);
  EXPECT_EQ(type_of(r, m, "blk.9.attn_output.weight"), GgmlType::kQ4_K);
  EXPECT_EQ(type_of(r, m, "blk.9.attn_q.weight"), GgmlType::kQ3_K);
  EXPECT_EQ(type_of(r, m, "blk.9.attn_k.weight"), GgmlType::kQ3_K);
  EXPECT_EQ(type_of(r, m, "blk.9.ffn_gate.weight"), GgmlType::kQ3_K);
  EXPECT_EQ(type_of(r, m, "output.weight"), GgmlType::kQ6_K);
}

TEST(QuantRecipe, Q2_KKeepsVFfnDownAndAttentionOutputInQ3_K) {
  const QuantRecipe r = *find_quant_recipe("q2_k");
  EXPECT_EQ(r.file_type, 10u);
  const RecipeModel pairs = model_of(16, 16, 0, true, 2);
  EXPECT_EQ(type_of(r, pairs, "blk.4.attn_v.weight"), GgmlType::kQ3_K);
  EXPECT_EQ(type_of(r, pairs, "blk.4.ffn_down.weight"), GgmlType::kQ3_K);
  EXPECT_EQ(type_of(r, pairs, "blk.4.attn_output.weight"), GgmlType::kQ3_K);
  EXPECT_EQ(type_of(r, pairs, "blk.4.ffn_up.weight"), GgmlType::kQ2_K);
  const RecipeModel grouped = model_of(16, 16, 0, true, 4);
  EXPECT_EQ(type_of(r, grouped, "blk.4.attn_v.weight"), GgmlType::kQ4_K);
}

TEST(QuantRecipe, TheSmallAndLargeMixesFollowLlamaCpp) {
  const RecipeModel m = model_of(16, 16, 0, true);
  const QuantRecipe q3s = *find_quant_recipe("q3_k_s");
  EXPECT_EQ(q3s.file_type, 11u);
  EXPECT_EQ(type_of(q3s, m, "blk.0.attn_v.weight"), GgmlType::kQ3_K);
  EXPECT_EQ(type_of(q3s, m, "blk.0.ffn_down.weight"), GgmlType::kQ3_K);
  EXPECT_EQ(type_of(q3s, m, "output.weight"), GgmlType::kQ6_K);
  const QuantRecipe q3l = *find_quant_recipe("q3_k_l");
  EXPECT_EQ(type_of(q3l, m, "blk.9.attn_v.weight"), GgmlType::kQ5_K);
  EXPECT_EQ(type_of(q3l, m, "blk.9.ffn_down.weight"), GgmlType::kQ5_K);
  EXPECT_EQ(type_of(q3l, m, "blk.9.attn_output.weight"), GgmlType::kQ5_K);
  EXPECT_EQ(type_of(q3l, m, "blk.9.ffn_up.weight"), GgmlType::kQ3_K);
  const QuantRecipe q4s = *find_quant_recipe("q4_k_s");
  EXPECT_EQ(q4s.file_type, 14u);
  EXPECT_EQ(type_of(q4s, m, "blk.3.attn_v.weight"), GgmlType::kQ5_K);
  EXPECT_EQ(type_of(q4s, m, "blk.4.attn_v.weight"), GgmlType::kQ4_K);
  EXPECT_EQ(type_of(q4s, m, "blk.1.ffn_down.weight"), GgmlType::kQ5_K);  // 1 < 16 / 8
  EXPECT_EQ(type_of(q4s, m, "blk.2.ffn_down.weight"), GgmlType::kQ4_K);
  const QuantRecipe q5s = *find_quant_recipe("q5_k_s");
  EXPECT_EQ(q5s.file_type, 16u);
  EXPECT_EQ(type_of(q5s, m, "blk.0.attn_v.weight"), GgmlType::kQ5_K);
  EXPECT_EQ(type_of(q5s, m, "blk.0.ffn_down.weight"), GgmlType::kQ5_K);
}

TEST(QuantRecipe, AttentionVTensorsAreCountedNotTheirLayers) {
  // A hybrid with attention every fourth layer: blk.3 holds the first V,
  // blk.7 the second (llama.cpp's i_attention_wv), so Q3_K_M's first two
  // are Q5_K and q4_k_m's more-bits rule runs over the 4 V tensors.
  RecipeModel m = model_of(16, 4, 0, true);
  m.attn_v_layers = {3, 7, 11, 15};
  EXPECT_EQ(type_of(*find_quant_recipe("q3_k_m"), m, "blk.7.attn_v.weight"), GgmlType::kQ5_K);
  EXPECT_EQ(type_of(*find_quant_recipe("q3_k_m"), m, "blk.11.attn_v.weight"), GgmlType::kQ4_K);
  // use_more_bits(i, 4): i >= 3 (7 * 4 / 8) or i % 3 == 2 (4 / 8 = 0), so
  // the V tensors 2 and 3 (layer 3 by its own number would be one).
  const QuantRecipe q4km = *find_quant_recipe("q4_k_m");
  EXPECT_EQ(type_of(q4km, m, "blk.3.attn_v.weight"), GgmlType::kQ4_K);
  EXPECT_EQ(type_of(q4km, m, "blk.7.attn_v.weight"), GgmlType::kQ4_K);
  EXPECT_EQ(type_of(q4km, m, "blk.11.attn_v.weight"), GgmlType::kQ6_K);
  EXPECT_EQ(type_of(q4km, m, "blk.15.attn_v.weight"), GgmlType::kQ6_K);
}

TEST(QuantRecipe, RowsThatDoNotFitABlockFallBackAsLlamaCppDoes) {
  EXPECT_EQ(row_fallback_type(GgmlType::kQ4_K), GgmlType::kQ5_0);
  EXPECT_EQ(row_fallback_type(GgmlType::kQ5_K), GgmlType::kQ5_1);
  EXPECT_EQ(row_fallback_type(GgmlType::kQ6_K), GgmlType::kQ8_0);
  EXPECT_EQ(row_fallback_type(GgmlType::kIQ4_XS), GgmlType::kIQ4_NL);
  EXPECT_EQ(row_fallback_type(GgmlType::kQ3_K), GgmlType::kQ4_0);
  EXPECT_EQ(row_fallback_type(GgmlType::kQ4_0), GgmlType::kQ8_0);
}

TEST(QuantRecipe, APlainTypeGoesToEveryMatrix) {
  const QuantRecipe r = *find_quant_recipe("q5_k");
  const RecipeModel m = model_of(28, 28, 0, true);
  EXPECT_EQ(type_of(r, m, "output.weight"), GgmlType::kQ5_K);
  EXPECT_EQ(type_of(r, m, "blk.0.attn_v.weight"), GgmlType::kQ5_K);
}

}  // namespace
}  // namespace met
