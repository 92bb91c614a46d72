// Tests for parse_hf_config / add_hf_config_metadata (src/hf/hf_config.h) and
// add_hf_generation_metadata (src/hf/hf_generation_config.h).
#include "hf/hf_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "hf/hf_generation_config.h"
#include "hf_test_support.h"
#include "testing/shared_data.h"

namespace met {
namespace {

using ::testing::HasSubstr;

TEST(HfConfig, TheSharedTinyStoriesConfigGivesLlamaKeys) {
  MET_REQUIRE_SHARED(path, "models/tinystories-656k-hf/config.json");
  Result<HfConfig> c = parse_hf_config(testing::read_file(path));
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  // README.md: 2 layers, hidden 128, MLP 384, 8 query heads, 4 KV heads, head_dim 16, eps 1e-6,
  // theta 10000, context 512, vocab 2048, tied embeddings.
  GgufMetadata md;
  add_hf_config_metadata(*c, md);
  EXPECT_EQ(*md.get_string("general.architecture"), "llama");
  EXPECT_EQ(*md.get_u32("llama.block_count"), 2u);
  EXPECT_EQ(*md.get_u32("llama.embedding_length"), 128u);
  EXPECT_EQ(*md.get_u32("llama.feed_forward_length"), 384u);
  EXPECT_EQ(*md.get_u32("llama.attention.head_count"), 8u);
  EXPECT_EQ(*md.get_u32("llama.attention.head_count_kv"), 4u);
  EXPECT_EQ(*md.get_u32("llama.rope.dimension_count"), 16u);
  EXPECT_EQ(*md.get_u32("llama.context_length"), 512u);
  EXPECT_EQ(*md.get_u32("llama.vocab_size"), 2048u);
  EXPECT_FLOAT_EQ(*md.get_f32("llama.attention.layer_norm_rms_epsilon"), 1e-6f);
  EXPECT_FLOAT_EQ(*md.get_f32("llama.rope.freq_base"), 10000.0f);
  EXPECT_FALSE(md.contains("llama.rope.scaling.type"));
  EXPECT_TRUE(c->tie_word_embeddings);
  EXPECT_TRUE(c->arch.permute_qk);
}

TEST(HfConfig, FamiliesMapToTheirGgufArchitectures) {
  for (const auto& [hf, gguf, permuted] : {std::tuple{"LlamaForCausalLM", "llama", true},
                                           std::tuple{"MistralForCausalLM", "llama", true},
                                           std::tuple{"Qwen2ForCausalLM", "qwen2", false},
                                           std::tuple{"Qwen3ForCausalLM", "qwen3", false}}) {
    testing::TinyHfModel m;
    m.architecture = hf;
    Result<HfConfig> c = parse_hf_config(testing::tiny_hf_config(m));
    ASSERT_TRUE(c.ok()) << hf << ": " << c.status().to_string();
    EXPECT_EQ(c->arch.gguf_arch, gguf);
    EXPECT_EQ(c->arch.permute_qk, permuted) << hf;
    EXPECT_EQ(c->head_dim, 8u);  // hidden_size / num_attention_heads without head_dim
  }
}

TEST(HfConfig, AnUnsupportedArchitectureIsNamed) {
  Result<HfConfig> c = parse_hf_config(R"({"architectures": ["GPT2LMHeadModel"], "hidden_size": 8})");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kUnimplemented);
  EXPECT_THAT(c.status().message(), HasSubstr("config.json: architectures [\"GPT2LMHeadModel\"] is not supported"));
}

TEST(HfConfig, MissingOrMistypedKeysAreNamed) {
  const struct {
    const char* json;
    const char* message;
  } cases[] = {
      {R"({"hidden_size": 8})", "key 'architectures' is missing"},
      {R"({"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 1})", "key 'hidden_size' is missing"},
      {R"({"architectures": ["LlamaForCausalLM"], "num_hidden_layers": "two"})", "key 'num_hidden_layers' is \"two\""},
      {R"({"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 1, "hidden_size": 8, "intermediate_size": 8,
           "num_attention_heads": 2, "num_key_value_heads": 3, "vocab_size": 4})",
       "num_key_value_heads 3 does not divide num_attention_heads 2"},
      {"[]", "config.json is not a JSON object"},
      {"{", "config.json is not a JSON object"},
  };
  for (const auto& c : cases) {
    Result<HfConfig> config = parse_hf_config(c.json);
    ASSERT_FALSE(config.ok()) << c.json;
    EXPECT_THAT(config.status().message(), HasSubstr(c.message)) << c.json;
  }
}

std::string config_with_rope(const std::string& rope_scaling) {
  std::string json = testing::tiny_hf_config({});
  const std::string null_rope = "\"rope_scaling\": null";
  json.replace(json.find(null_rope), null_rope.size(), "\"rope_scaling\": " + rope_scaling);
  return json;
}

TEST(HfConfig, LinearAndYarnRopeScalingBecomeGgufKeys) {
  Result<HfConfig> c = parse_hf_config(config_with_rope(R"({"type": "linear", "factor": 4.0})"));
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  GgufMetadata md;
  add_hf_config_metadata(*c, md);
  EXPECT_EQ(*md.get_string("llama.rope.scaling.type"), "linear");
  EXPECT_FLOAT_EQ(*md.get_f32("llama.rope.scaling.factor"), 4.0f);
  c = parse_hf_config(
      config_with_rope(R"({"rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 32})"));
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  GgufMetadata yarn;
  add_hf_config_metadata(*c, yarn);
  EXPECT_EQ(*yarn.get_string("llama.rope.scaling.type"), "yarn");
  EXPECT_EQ(*yarn.get_u32("llama.rope.scaling.original_context_length"), 32u);
}

TEST(HfConfig, Llama3RopeScalingKeepsItsParameters) {
  Result<HfConfig> c = parse_hf_config(config_with_rope(
      R"({"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
          "original_max_position_embeddings": 8192})"));
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->rope_scaling.type, "llama3");
  EXPECT_FLOAT_EQ(c->rope_scaling.factor, 8.0f);
  EXPECT_EQ(c->rope_scaling.original_context_length, 8192u);
  GgufMetadata md;
  add_hf_config_metadata(*c, md);
  EXPECT_FALSE(md.contains("llama.rope.scaling.type"));  // rope_freqs.weight carries it
}

TEST(HfConfig, AnUnknownRopeScalingIsRefusedByName) {
  Result<HfConfig> c = parse_hf_config(config_with_rope(R"({"rope_type": "longrope", "factor": 2.0})"));
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("rope_scaling type 'longrope' is not supported"));
}

TEST(HfGenerationConfig, SamplingDefaultsBecomeGeneralSamplingKeys) {
  GgufMetadata md;
  ASSERT_TRUE(add_hf_generation_metadata(
                  R"({"do_sample": true, "temperature": 0.6, "top_p": 0.9, "top_k": 20, "repetition_penalty": 1.1,
                      "bos_token_id": 1})",
                  md)
                  .ok());
  EXPECT_FLOAT_EQ(*md.get_f32("general.sampling.temp"), 0.6f);
  EXPECT_FLOAT_EQ(*md.get_f32("general.sampling.top_p"), 0.9f);
  EXPECT_EQ(*md.get_i64("general.sampling.top_k"), 20);
  EXPECT_FLOAT_EQ(*md.get_f32("general.sampling.penalty_repeat"), 1.1f);
  EXPECT_FALSE(md.contains("general.sampling.min_p"));
}

TEST(HfGenerationConfig, TheSharedConfigHasNoSamplingKeys) {
  MET_REQUIRE_SHARED(path, "models/tinystories-656k-hf/generation_config.json");
  GgufMetadata md;
  ASSERT_TRUE(add_hf_generation_metadata(testing::read_file(path), md).ok());
  EXPECT_EQ(md.size(), 0u);
}

TEST(HfGenerationConfig, AMistypedValueIsNamed) {
  GgufMetadata md;
  const Status s = add_hf_generation_metadata(R"({"temperature": "hot"})", md);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("key 'temperature'"));
}

}  // namespace
}  // namespace met
