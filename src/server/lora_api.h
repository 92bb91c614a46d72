// The LoRA adapter routes, vLLM's API (behind the API key):
//   POST /v1/load_lora_adapter   {"lora_name": NAME, "lora_path": PATH}
//   POST /v1/unload_lora_adapter {"lora_name": NAME}
// answered with a line of text on success (vLLM's), and an OpenAI-style
// error otherwise: 400 for a bad body, a taken name or a file that does not
// fit the model (naming the fault), 404 for an unknown name on unload, 400
// when the server runs no adapters (--max-loras 0). A request selects an
// adapter with `model: NAME` (adapter_for_model); /v1/models lists each with
// its parent, the served model.
// Threading: any io thread (AdapterRegistry is thread-safe). Tested by
// tests/server/lora_api_test.cc and through `met serve` by
// tests/server/serve_lora_test.cc.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/adapter_registry.h"
#include "server/api_error.h"
#include "server/openai_request.h"

namespace met {

struct LoraApi {
  AdapterRegistry* registry = nullptr;  // null: the server runs no adapters
  int32_t max_loras = 0;

  ApiResult<std::string> load(std::string_view body) const;
  ApiResult<std::string> unload(std::string_view body) const;
  // The adapter `model` names, or nullopt (the base model: any other name).
  std::optional<AdapterRegistry::Entry> adapter_for_model(std::string_view model) const;
  // /v1/models: the served model, then each adapter with its parent.
  nlohmann::ordered_json models(const std::string& model_name, int64_t created) const;
};

}  // namespace met
