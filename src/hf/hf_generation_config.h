// hf_generation_config: generation_config.json's sampling defaults as the
// GGUF keys llama.cpp's converter writes and met serve reads as the model's
// recommendation (cli/model_sampling.h): temperature -> general.sampling.temp,
// top_p, top_k, min_p, repetition_penalty -> general.sampling.penalty_repeat.
// Keys absent or null are not written; `do_sample` is not read (llama.cpp's
// converter does not read it either). A value of the wrong type is an error
// naming the key.
// Threading: pure. Tested by tests/hf/hf_config_test.cc.
#pragma once

#include <string_view>

#include "core/status.h"
#include "gguf/gguf_value.h"

namespace met {

Status add_hf_generation_metadata(std::string_view generation_config_json, GgufMetadata& md);

}  // namespace met
