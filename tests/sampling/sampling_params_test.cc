// Tests for validate_sampling (src/sampling/sampling_params.h).
#include "sampling/sampling_params.h"

#include <string>

#include <gtest/gtest.h>

namespace met {
namespace {

std::string message_for(const SamplingParams& p) { return validate_sampling(p).message(); }

TEST(ValidateSampling, AcceptsTheDefaultsAndATypicalRequest) {
  EXPECT_TRUE(validate_sampling({}).ok());
  EXPECT_TRUE(validate_sampling({.temperature = 0.7f, .top_k = 40, .top_p = 0.9f}).ok());
}

TEST(ValidateSampling, NamesEveryFieldOutOfRange) {
  struct Case {
    SamplingParams params;
    std::string field;
  };
  const std::vector<Case> cases = {
      {{.temperature = -1.0f}, "temperature"},
      {{.top_k = -2}, "top_k"},
      {{.top_p = 0.0f}, "top_p"},
      {{.logit_bias = {{.token = 3, .bias = 101.0f}}}, "logit_bias"},
      {{.logit_bias = {{.token = -1, .bias = 1.0f}}}, "logit_bias"},
      {{.allowed_token_ids = std::vector<TokenId>{}}, "allowed_token_ids"},
      {{.bad_words = {{}}}, "bad_words"},
      {{.bad_words = {{1, -4}}}, "bad_words"},
      {{.repetition_penalty = 0.0f}, "repetition_penalty"},
      {{.repetition_penalty_window = -1}, "repetition_penalty_window"},
      {{.presence_penalty = 2.5f}, "presence_penalty"},
      {{.frequency_penalty = -3.0f}, "frequency_penalty"},
      {{.dry_multiplier = -0.1f}, "dry_multiplier"},
      {{.dry_base = 1.0f}, "dry_base"},
      {{.dry_allowed_length = 0}, "dry_allowed_length"},
      {{.dry_sequence_breakers = {-7}}, "dry_sequence_breakers"},
      {{.lz_penalty = -1.0f}, "lz_penalty"},
      {{.lz_window = 1}, "lz_window"},
      {{.lz_buffer = 0}, "lz_buffer"},
      {{.min_p = 1.5f}, "min_p"},
      {{.typical_p = 0.0f}, "typical_p"},
      {{.top_n_sigma = -1.0f}, "top_n_sigma"},
      {{.xtc_probability = 2.0f}, "xtc_probability"},
      {{.xtc_threshold = 0.0f}, "xtc_threshold"},
      {{.adaptive_confidence = 1.0f}, "adaptive_confidence"},
      {{.adaptive_decay = 0.0f}, "adaptive_decay"},
      {{.adaptive_min_ratio = 0.0f}, "adaptive_min_ratio"},
      {{.adaptive_entropy_spike = 0.0f}, "adaptive_entropy_spike"},
  };
  for (const Case& c : cases) {
    const Status s = validate_sampling(c.params);
    EXPECT_FALSE(s.ok()) << c.field;
    EXPECT_NE(s.message().find(c.field), std::string::npos) << c.field << ": " << s.message();
  }
}

TEST(ValidateSampling, RejectsNonFiniteNumbers) {
  EXPECT_NE(message_for({.temperature = INFINITY}).find("temperature"), std::string::npos);
  EXPECT_NE(message_for({.dry_base = NAN}).find("dry_base"), std::string::npos);
}

}  // namespace
}  // namespace met
