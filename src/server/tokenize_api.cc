// TokenizeApi. Tested by tests/server/tokenize_api_test.cc.
#include "server/tokenize_api.h"

#include <fmt/format.h>

#include <utility>

namespace met {
namespace {

using RequestJson = nlohmann::json;

ApiResult<RequestJson> parse_object(std::string_view body) {
  RequestJson j = RequestJson::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return invalid_request(std::nullopt, "the body is not valid JSON (or not UTF-8)");
  if (!j.is_object()) return invalid_request(std::nullopt, "the body must be a JSON object");
  return j;
}

// A boolean field's value; `fallback` when absent or null.
ApiResult<bool> flag(const RequestJson& obj, const char* name, bool fallback) {
  auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) return invalid_request(name, fmt::format("'{}' must be a boolean", name));
  return it->get<bool>();
}

}  // namespace

TokenizeApi::TokenizeApi(const PromptBuilder& prompts, int32_t max_model_len)
    : prompts_(prompts), tokenizer_(prompts.tokenizer()), max_model_len_(max_model_len) {}

ApiResult<std::vector<TokenId>> TokenizeApi::tokenize_messages(std::string_view body, const RequestJson& obj) const {
  if (!prompts_.has_chat_template()) {
    return invalid_request("messages", "this model has no usable chat template; start met serve with --chat-template");
  }
  ApiResult<OpenAiRequest> parsed = parse_openai_request(Endpoint::kChatCompletions, body);
  if (auto* e = std::get_if<ApiError>(&parsed)) return *e;
  ApiResult<bool> generation_prompt = flag(obj, "add_generation_prompt", true);
  if (auto* e = std::get_if<ApiError>(&generation_prompt)) return *e;
  ApiResult<bool> special = flag(obj, "add_special_tokens", true);
  if (auto* e = std::get_if<ApiError>(&special)) return *e;
  ApiResult<std::string> text =
      prompts_.chat_text(std::get<OpenAiRequest>(parsed), std::get<bool>(generation_prompt));
  if (auto* e = std::get_if<ApiError>(&text)) return *e;
  return prompts_.chat_ids(std::get<std::string>(text), std::get<bool>(special));
}

ApiResult<nlohmann::ordered_json> TokenizeApi::tokenize(std::string_view body) const {
  ApiResult<RequestJson> parsed = parse_object(body);
  if (auto* e = std::get_if<ApiError>(&parsed)) return *e;
  const RequestJson& obj = std::get<RequestJson>(parsed);
  const bool has_prompt = obj.contains("prompt") && !obj["prompt"].is_null();
  const bool has_messages = obj.contains("messages") && !obj["messages"].is_null();
  if (has_prompt == has_messages) {
    return invalid_request(std::nullopt, "give exactly one of 'prompt' (a string) and 'messages'");
  }
  std::vector<TokenId> ids;
  if (has_prompt) {
    if (!obj["prompt"].is_string()) return invalid_request("prompt", "'prompt' must be a string");
    ApiResult<bool> special = flag(obj, "add_special_tokens", true);
    if (auto* e = std::get_if<ApiError>(&special)) return *e;
    ids = tokenizer_.encode(obj["prompt"].get<std::string>(), EncodeOptions{.add_special = std::get<bool>(special)});
  } else {
    ApiResult<std::vector<TokenId>> chat = tokenize_messages(body, obj);
    if (auto* e = std::get_if<ApiError>(&chat)) return *e;
    ids = std::move(std::get<std::vector<TokenId>>(chat));
  }
  nlohmann::ordered_json out;
  out["count"] = ids.size();
  out["max_model_len"] = max_model_len_;
  out["tokens"] = ids;
  return out;
}

ApiResult<nlohmann::ordered_json> TokenizeApi::detokenize(std::string_view body) const {
  ApiResult<RequestJson> parsed = parse_object(body);
  if (auto* e = std::get_if<ApiError>(&parsed)) return *e;
  const RequestJson& obj = std::get<RequestJson>(parsed);
  auto it = obj.find("tokens");
  if (it == obj.end() || !it->is_array()) return invalid_request("tokens", "'tokens' must be an array of token ids");
  const int64_t vocab_size = static_cast<int64_t>(tokenizer_.vocab().size());
  std::vector<TokenId> ids;
  ids.reserve(it->size());
  for (size_t i = 0; i < it->size(); ++i) {
    const RequestJson& t = (*it)[i];
    if (!t.is_number_integer()) {
      return invalid_request("tokens", fmt::format("tokens[{}] must be an integer token id", i));
    }
    const int64_t id = t.get<int64_t>();
    if (id < 0 || id >= vocab_size) {
      return invalid_request("tokens", fmt::format("tokens[{}] = {} is outside the vocabulary (ids 0..{})", i, id,
                                                   vocab_size - 1));
    }
    ids.push_back(static_cast<TokenId>(id));
  }
  nlohmann::ordered_json out;
  out["prompt"] = tokenizer_.decode(ids, /*skip_special=*/false);
  return out;
}

}  // namespace met
