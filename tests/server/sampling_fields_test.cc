// Tests for read_sampling_fields: every sampler field of issue 8 reaches
// SamplingParams, and a wrong type or range is a 400 naming the field.
#include "server/sampling_fields.h"

#include <gtest/gtest.h>

#include <string>

namespace met {
namespace {

using json_fields::Json;

struct SamplingRead {
  SamplingParams params;
  SamplingText text;
  SamplingGiven given;
  std::optional<ApiError> error;
};

SamplingRead read_sampling(const std::string& body) {
  SamplingRead r;
  r.error = read_sampling_fields(Json::parse(body), r.params, r.text, r.given);
  return r;
}

// The API documents temperature 1 and top_p 1 for a request that leaves
// them out; a model file's recommended values replace those defaults, and a
// field the request gives (null counts as absent) always wins.
TEST(SamplingFields, FieldsLeftOutTakeTheDefaultsAndGivenOnesWin) {
  SamplingRead r = read_sampling(R"({"top_k": 5, "min_p": null})");
  ASSERT_FALSE(r.error.has_value());
  EXPECT_TRUE(r.given.top_k);
  EXPECT_FALSE(r.given.temperature);
  EXPECT_FALSE(r.given.min_p);
  apply_sampling_defaults(SamplingDefaults{}, r.given, r.params);
  EXPECT_EQ(r.params.temperature, 1.0f) << "not greedy";
  EXPECT_EQ(r.params.top_p, 1.0f);
  EXPECT_EQ(r.params.top_k, 5);

  const SamplingDefaults model{.temperature = 0.6f, .top_p = 0.95f, .top_k = 20, .min_p = 0.05f,
                               .repetition_penalty = 1.1f, .from_model = true};
  r = read_sampling(R"({"temperature": 0, "top_k": 5})");
  apply_sampling_defaults(model, r.given, r.params);
  EXPECT_EQ(r.params.temperature, 0.0f) << "a given 0 stays greedy";
  EXPECT_EQ(r.params.top_k, 5);
  EXPECT_EQ(r.params.top_p, 0.95f);
  EXPECT_EQ(r.params.min_p, 0.05f);
  EXPECT_EQ(r.params.repetition_penalty, 1.1f);
}

TEST(SamplingFields, EveryFieldReachesTheSamplingParams) {
  const SamplingRead r = read_sampling(R"({
    "temperature": 0.7, "top_p": 0.9, "top_k": 50, "seed": 9, "min_p": 0.05, "typical_p": 0.8,
    "top_n_sigma": 1.5, "xtc_probability": 0.5, "xtc_threshold": 0.2, "adaptive_temperature": true,
    "presence_penalty": 0.5, "frequency_penalty": -0.5, "repetition_penalty": 1.2,
    "repetition_penalty_window": 64, "dry_multiplier": 0.8, "dry_base": 2.0, "dry_allowed_length": 3,
    "dry_sequence_breakers": ["\n", ":"], "lz_penalty": 0.3, "lz_window": 128, "lz_buffer": 16,
    "logit_bias": {"3": -100}, "allowed_token_ids": [1, 2, 3], "bad_words": ["bad", "worse words"]})");
  ASSERT_FALSE(r.error.has_value()) << r.error->message;
  const SamplingParams& p = r.params;
  EXPECT_FLOAT_EQ(p.temperature, 0.7f);
  EXPECT_FLOAT_EQ(p.top_p, 0.9f);
  EXPECT_EQ(p.top_k, 50);
  EXPECT_EQ(p.seed, 9u);
  EXPECT_FLOAT_EQ(p.min_p, 0.05f);
  EXPECT_FLOAT_EQ(p.typical_p, 0.8f);
  EXPECT_FLOAT_EQ(p.top_n_sigma, 1.5f);
  EXPECT_FLOAT_EQ(p.xtc_probability, 0.5f);
  EXPECT_FLOAT_EQ(p.xtc_threshold, 0.2f);
  EXPECT_TRUE(p.adaptive_temperature);
  EXPECT_FLOAT_EQ(p.presence_penalty, 0.5f);
  EXPECT_FLOAT_EQ(p.frequency_penalty, -0.5f);
  EXPECT_FLOAT_EQ(p.repetition_penalty, 1.2f);
  EXPECT_EQ(p.repetition_penalty_window, 64);
  EXPECT_FLOAT_EQ(p.dry_multiplier, 0.8f);
  EXPECT_FLOAT_EQ(p.dry_base, 2.0f);
  EXPECT_EQ(p.dry_allowed_length, 3);
  EXPECT_FLOAT_EQ(p.lz_penalty, 0.3f);
  EXPECT_EQ(p.lz_window, 128);
  EXPECT_EQ(p.lz_buffer, 16);
  ASSERT_EQ(p.logit_bias.size(), 1u);
  EXPECT_EQ(p.logit_bias[0].token, 3);
  EXPECT_EQ(p.allowed_token_ids, (std::vector<TokenId>{1, 2, 3}));
  EXPECT_EQ(r.text.bad_words, (std::vector<std::string>{"bad", "worse words"}));
  EXPECT_EQ(r.text.dry_sequence_breakers, (std::vector<std::string>{"\n", ":"}));
}

TEST(SamplingFields, AbsentAndNullFieldsKeepTheDefaults) {
  const SamplingRead r = read_sampling(R"({"top_k": null, "dry_base": null})");
  ASSERT_FALSE(r.error.has_value());
  const SamplingParams defaults;
  EXPECT_EQ(r.params.top_k, defaults.top_k);
  EXPECT_FLOAT_EQ(r.params.dry_base, defaults.dry_base);
}

TEST(SamplingFields, AWrongTypeOrRangeNamesTheField) {
  struct Case {
    const char* body;
    const char* param;
  };
  const Case cases[] = {
      {R"({"typical_p": 0})", "typical_p"},
      {R"({"typical_p": "x"})", "typical_p"},
      {R"({"top_n_sigma": -1})", "top_n_sigma"},
      {R"({"xtc_probability": 1.5})", "xtc_probability"},
      {R"({"xtc_threshold": -0.1})", "xtc_threshold"},
      {R"({"adaptive_temperature": 1})", "adaptive_temperature"},
      {R"({"repetition_penalty_window": -1})", "repetition_penalty_window"},
      {R"({"repetition_penalty_window": 1.5})", "repetition_penalty_window"},
      {R"({"dry_multiplier": -1})", "dry_multiplier"},
      {R"({"dry_base": 1})", "dry_base"},
      {R"({"dry_allowed_length": 0})", "dry_allowed_length"},
      {R"({"dry_sequence_breakers": "\n"})", "dry_sequence_breakers"},
      {R"({"dry_sequence_breakers": [1]})", "dry_sequence_breakers"},
      {R"({"lz_penalty": -0.5})", "lz_penalty"},
      {R"({"lz_window": 1})", "lz_window"},
      {R"({"lz_buffer": 0})", "lz_buffer"},
      {R"({"lz_window": 16, "lz_buffer": 32})", "lz_buffer"},
      {R"({"allowed_token_ids": []})", "allowed_token_ids"},
      {R"({"allowed_token_ids": [1, -2]})", "allowed_token_ids"},
      {R"({"allowed_token_ids": {"1": 1}})", "allowed_token_ids"},
      {R"({"bad_words": [""]})", "bad_words"},
      {R"({"bad_words": "word"})", "bad_words"},
      {R"({"min_p": -0.1})", "min_p"},
      {R"({"top_k": 1.5})", "top_k"},
  };
  for (const Case& c : cases) {
    const SamplingRead r = read_sampling(c.body);
    ASSERT_TRUE(r.error.has_value()) << c.body << " was accepted";
    EXPECT_EQ(r.error->status, 400) << c.body;
    EXPECT_EQ(r.error->param, c.param) << c.body << ": " << r.error->message;
  }
}

}  // namespace
}  // namespace met
