// OpenAI response bodies. Tested by tests/server/openai_response_test.cc.
#include "server/openai_response.h"

#include <fmt/format.h>

#include <utility>
#include <variant>

namespace met {
namespace {

using Json = nlohmann::ordered_json;

bool is_chat(const ResponseMeta& m) { return m.endpoint == Endpoint::kChatCompletions; }

Json envelope(const ResponseMeta& m, const char* object) {
  Json j;
  j["id"] = m.id;
  j["object"] = object;
  j["created"] = m.created;
  j["model"] = m.model;
  return j;
}

}  // namespace

std::string make_response_id(Endpoint endpoint, uint64_t unique) {
  return fmt::format("{}-{:016x}", endpoint == Endpoint::kChatCompletions ? "chatcmpl" : "cmpl", unique);
}

Json usage_json(const Usage& u) {
  Json j;
  j["prompt_tokens"] = u.prompt_tokens;
  j["completion_tokens"] = u.completion_tokens;
  j["total_tokens"] = u.prompt_tokens + u.completion_tokens;
  j["prompt_tokens_details"] = Json{{"cached_tokens", u.cached_prompt_tokens}};
  j["completion_tokens_details"] = Json{{"reasoning_tokens", 0}, {"accepted_prediction_tokens", 0}};
  return j;
}

Json completion_body(const ResponseMeta& meta, const std::string& text, const FinishEvent& finish) {
  Json j = envelope(meta, is_chat(meta) ? "chat.completion" : "text_completion");
  Json choice;
  choice["index"] = 0;
  if (is_chat(meta)) {
    choice["message"] = Json{{"role", "assistant"}, {"content", text}};
  } else {
    choice["text"] = text;
  }
  choice["finish_reason"] = finish.finish_reason;
  choice["logprobs"] = nullptr;
  j["choices"] = Json::array({std::move(choice)});
  j["usage"] = usage_json(finish.usage);
  return j;
}

Json models_body(const std::string& model, int64_t created) {
  Json m;
  m["id"] = model;
  m["object"] = "model";
  m["created"] = created;
  m["owned_by"] = "met";
  Json j;
  j["object"] = "list";
  j["data"] = Json::array({std::move(m)});
  return j;
}

std::string sse_event(const Json& j) {
  return fmt::format("data: {}\n\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

Json SseEncoder::chunk(const std::string* text, bool role, const std::string* finish_reason) const {
  Json j = envelope(meta_, is_chat(meta_) ? "chat.completion.chunk" : "text_completion");
  Json choice;
  choice["index"] = 0;
  if (is_chat(meta_)) {
    Json delta = Json::object();
    if (role) delta["role"] = "assistant";
    if (text != nullptr) delta["content"] = *text;
    choice["delta"] = std::move(delta);
  } else {
    choice["text"] = text != nullptr ? *text : std::string();
  }
  choice["finish_reason"] = finish_reason != nullptr ? Json(*finish_reason) : Json(nullptr);
  choice["logprobs"] = nullptr;
  j["choices"] = Json::array({std::move(choice)});
  if (include_usage_) j["usage"] = nullptr;
  return j;
}

std::string SseEncoder::start() {
  if (!is_chat(meta_)) return "";
  const std::string empty;
  return sse_event(chunk(&empty, /*role=*/true, nullptr));
}

std::string SseEncoder::encode(const StreamEvent& event) {
  if (const auto* d = std::get_if<DeltaEvent>(&event)) {
    return d->text.empty() ? std::string() : sse_event(chunk(&d->text, false, nullptr));
  }
  if (const auto* f = std::get_if<FinishEvent>(&event)) {
    std::string out = sse_event(chunk(nullptr, false, &f->finish_reason));
    if (include_usage_) {
      Json u = envelope(meta_, is_chat(meta_) ? "chat.completion.chunk" : "text_completion");
      u["choices"] = Json::array();
      u["usage"] = usage_json(f->usage);
      out += sse_event(u);
    }
    out += kSseDone;
    return out;
  }
  return fail(http_error(500, std::get<ErrorEvent>(event).message));
}

std::string SseEncoder::fail(const ApiError& error) {
  Json j;
  j["error"] = error_object(error);
  return sse_event(j) + std::string(kSseDone);
}

}  // namespace met
