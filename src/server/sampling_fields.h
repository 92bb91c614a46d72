// The sampler's request fields (sampling/sampler.h's chain) read from a request body
// into SamplingParams, each checked for type and range with a 400 naming the
// field: OpenAI's (temperature, top_p, seed, presence/frequency_penalty,
// logit_bias), vLLM's (top_k, min_p, repetition_penalty, allowed_token_ids,
// bad_words), llama.cpp's (typical_p, top_n_sigma, xtc_*, dry_*) and met's
// (repetition_penalty_window, lz_penalty, lz_window, lz_buffer,
// adaptive_temperature). Fields given as text (bad_words,
// dry_sequence_breakers) are kept as strings for PromptBuilder to tokenize.
// The fields a request leaves out take the served model's SamplingDefaults:
// the API's documented defaults (temperature 1, top_p 1) unless the model
// file recommends its own (GGUF general.sampling.*), applied by PromptBuilder.
// Threading: pure functions. Tested by tests/server/sampling_fields_test.cc.
#pragma once

#include <string>
#include <vector>

#include "sampling/sampling_params.h"
#include "server/json_fields.h"

namespace met {

struct SamplingText {
  std::vector<std::string> bad_words;              // each banned as every tokenization PromptBuilder gives it
  std::vector<std::string> dry_sequence_breakers;  // each breaks DRY through the tokens it encodes to
};

// What a request that leaves a field out samples with.
struct SamplingDefaults {
  float temperature = 1.0f;  // OpenAI's documented default (not greedy)
  float top_p = 1.0f;
  int32_t top_k = 0;  // off
  float min_p = 0.0f;
  float repetition_penalty = 1.0f;
  bool from_model = false;  // some value came from the model file
};

// Which of the defaulted fields a request gave.
struct SamplingGiven {
  bool temperature = false;
  bool top_p = false;
  bool top_k = false;
  bool min_p = false;
  bool repetition_penalty = false;
};

json_fields::MaybeError read_sampling_fields(const json_fields::Json& obj, SamplingParams& s, SamplingText& text,
                                             SamplingGiven& given);

// Sets each field the request did not give to its default.
void apply_sampling_defaults(const SamplingDefaults& d, const SamplingGiven& given, SamplingParams& s);

}  // namespace met
