// LoraApi. Tested by tests/server/lora_api_test.cc.
#include "server/lora_api.h"

#include <fmt/format.h>

#include "server/openai_response.h"

namespace met {
namespace {

using RequestJson = nlohmann::json;

ApiResult<RequestJson> parse_body(std::string_view body) {
  RequestJson j = RequestJson::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return invalid_request(std::nullopt, "the body is not valid JSON (or not UTF-8)");
  if (!j.is_object()) return invalid_request(std::nullopt, "the body must be a JSON object");
  return j;
}

ApiResult<std::string> string_field(const RequestJson& obj, const char* name) {
  const auto it = obj.find(name);
  if (it == obj.end() || !it->is_string() || it->get_ref<const std::string&>().empty()) {
    return invalid_request(name, fmt::format("'{}' must be a non-empty string", name));
  }
  return it->get<std::string>();
}

ApiError no_adapters() {
  return http_error(400, "this server runs no LoRA adapters: start it with --max-loras N (or --lora NAME=PATH)");
}

}  // namespace

ApiResult<std::string> LoraApi::load(std::string_view body) const {
  if (registry == nullptr || max_loras == 0) return no_adapters();
  ApiResult<RequestJson> j = parse_body(body);
  if (auto* e = std::get_if<ApiError>(&j)) return *e;
  ApiResult<std::string> name = string_field(std::get<RequestJson>(j), "lora_name");
  if (auto* e = std::get_if<ApiError>(&name)) return *e;
  ApiResult<std::string> path = string_field(std::get<RequestJson>(j), "lora_path");
  if (auto* e = std::get_if<ApiError>(&path)) return *e;
  const std::string& n = std::get<std::string>(name);
  const Status s = registry->load(n, std::get<std::string>(path));
  if (!s.ok()) return http_error(400, fmt::format("adapter '{}' was not loaded: {}", n, s.message()));
  return fmt::format("Success: LoRA adapter '{}' added successfully.", n);
}

ApiResult<std::string> LoraApi::unload(std::string_view body) const {
  if (registry == nullptr || max_loras == 0) return no_adapters();
  ApiResult<RequestJson> j = parse_body(body);
  if (auto* e = std::get_if<ApiError>(&j)) return *e;
  ApiResult<std::string> name = string_field(std::get<RequestJson>(j), "lora_name");
  if (auto* e = std::get_if<ApiError>(&name)) return *e;
  const std::string& n = std::get<std::string>(name);
  const Status s = registry->unload(n);
  if (!s.ok()) return http_error(404, fmt::format("The lora adapter '{}' cannot be found.", n));
  return fmt::format("Success: LoRA adapter '{}' removed successfully.", n);
}

std::optional<AdapterRegistry::Entry> LoraApi::adapter_for_model(std::string_view model) const {
  if (registry == nullptr || model.empty()) return std::nullopt;
  return registry->find(model);
}

nlohmann::ordered_json LoraApi::models(const std::string& model_name, int64_t created) const {
  nlohmann::ordered_json j = models_body(model_name, created);
  if (registry == nullptr) return j;
  for (const AdapterRegistry::Entry& e : registry->list()) {
    nlohmann::ordered_json m;
    m["id"] = e.name;
    m["object"] = "model";
    m["created"] = created;
    m["owned_by"] = "met";
    m["root"] = e.path;
    m["parent"] = model_name;
    j["data"].push_back(std::move(m));
  }
  return j;
}

}  // namespace met
