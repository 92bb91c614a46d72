// add_hf_generation_metadata. Tested by tests/hf/hf_config_test.cc.
#include "hf/hf_generation_config.h"

#include <array>
#include <utility>

#include <nlohmann/json.hpp>

namespace met {

Status add_hf_generation_metadata(std::string_view generation_config_json, GgufMetadata& md) {
  const nlohmann::json j =
      nlohmann::json::parse(generation_config_json.begin(), generation_config_json.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return data_loss("generation_config.json is not a JSON object");
  static constexpr std::array<std::pair<const char*, const char*>, 5> kKeys = {{
      {"temperature", "general.sampling.temp"},
      {"top_p", "general.sampling.top_p"},
      {"top_k", "general.sampling.top_k"},
      {"min_p", "general.sampling.min_p"},
      {"repetition_penalty", "general.sampling.penalty_repeat"},
  }};
  for (const auto& [hf_key, gguf_key] : kKeys) {
    const auto it = j.find(hf_key);
    if (it == j.end() || it->is_null()) continue;
    if (!it->is_number()) return invalid_argument("generation_config.json: key '{}' is {}, expected a number",
                                                  hf_key, it->dump());
    if (std::string_view(hf_key) == "top_k") {
      md.set(gguf_key, static_cast<int32_t>(it->get<int64_t>()));
    } else {
      md.set(gguf_key, it->get<float>());
    }
  }
  return ok_status();
}

}  // namespace met
