// Tests for model_sampling_defaults: a model file's recommended sampler
// values replace the API's defaults; bad ones are named and not used.
#include "cli/model_sampling.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace met {
namespace {

TEST(ModelSampling, WithoutRecommendationsTheApiDefaultsStand) {
  GgufMetadata md;
  md.set("general.architecture", "llama");
  const ModelSampling s = model_sampling_defaults(md);
  EXPECT_EQ(s.defaults.temperature, 1.0f);
  EXPECT_EQ(s.defaults.top_p, 1.0f);
  EXPECT_FALSE(s.defaults.from_model);
  EXPECT_EQ(s.described, "");
  EXPECT_TRUE(s.warnings.empty());
}

TEST(ModelSampling, TheFilesRecommendedValuesBecomeTheDefaults) {
  GgufMetadata md;
  md.set("general.sampling.temp", 0.6f);
  md.set("general.sampling.top_p", 0.95f);
  md.set("general.sampling.top_k", int32_t{20});
  md.set("general.sampling.min_p", 0.0f);
  const ModelSampling s = model_sampling_defaults(md);
  EXPECT_FLOAT_EQ(s.defaults.temperature, 0.6f);
  EXPECT_FLOAT_EQ(s.defaults.top_p, 0.95f);
  EXPECT_EQ(s.defaults.top_k, 20);
  EXPECT_EQ(s.defaults.min_p, 0.0f);
  EXPECT_EQ(s.defaults.repetition_penalty, 1.0f);
  EXPECT_TRUE(s.defaults.from_model);
  EXPECT_EQ(s.described, "temperature 0.6, top_p 0.95, top_k 20, min_p 0");
}

TEST(ModelSampling, HostileOrMistypedValuesAreNamedAndNotUsed) {
  GgufMetadata md;
  md.set("general.sampling.temp", std::nanf(""));
  md.set("general.sampling.top_p", 0.0f);
  md.set("general.sampling.top_k", "twenty");
  md.set("general.sampling.penalty_repeat", 1e9f);
  md.set("general.sampling.min_p", 0.1f);
  const ModelSampling s = model_sampling_defaults(md);
  EXPECT_EQ(s.defaults.temperature, 1.0f);
  EXPECT_EQ(s.defaults.top_p, 1.0f);
  EXPECT_EQ(s.defaults.top_k, 0);
  EXPECT_EQ(s.defaults.repetition_penalty, 1.0f);
  EXPECT_FLOAT_EQ(s.defaults.min_p, 0.1f);
  ASSERT_EQ(s.warnings.size(), 4u);
  EXPECT_NE(s.warnings[0].find("general.sampling.temp"), std::string::npos);
  EXPECT_NE(s.warnings[2].find("not a number"), std::string::npos);
}

}  // namespace
}  // namespace met
