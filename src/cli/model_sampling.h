// model_sampling_defaults: the sampler values a model file recommends
// (GGUF general.sampling.temp, .top_p, .top_k, .min_p, .penalty_repeat, as
// llama.cpp's converters write them from generation_config.json), which
// `met serve` gives requests that leave those fields out in place of the
// API's defaults (temperature 1, top_p 1).
// Invariants: a value out of the API's range, mistyped or not finite is not
// used (a warning says so); what is used is listed in `described`.
// Threading: pure. Tested by tests/cli/model_sampling_test.cc.
#pragma once

#include <string>
#include <vector>

#include "gguf/gguf_value.h"
#include "server/sampling_fields.h"

namespace met {

struct ModelSampling {
  SamplingDefaults defaults;
  std::string described;              // "temperature 0.6, top_p 0.95" ("" when the file has none)
  std::vector<std::string> warnings;  // keys present but not used, and why
};

ModelSampling model_sampling_defaults(const GgufMetadata& md);

}  // namespace met
