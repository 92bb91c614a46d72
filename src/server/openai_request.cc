// OpenAiRequest parsing. Tested by tests/server/openai_request_test.cc.
#include "server/openai_request.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <utility>

#include "sampling/logprobs.h"
#include "server/agent_fields.h"
#include "server/sampling_fields.h"
#include "tokenizer/utf8.h"

namespace met {
namespace {

using namespace json_fields;

// Limits on what one request may carry.
constexpr size_t kMaxStopStrings = 16;
constexpr int64_t kMaxChoices = 32;
constexpr double kMaxTimeoutSeconds = 7 * 24 * 3600.0;

MaybeError read_stop(const Json& obj, std::vector<std::string>& out) {
  const Json* v = field(obj, "stop");
  if (v == nullptr) return std::nullopt;
  if (v->is_string()) {
    out.push_back(v->get<std::string>());
    return std::nullopt;
  }
  if (!v->is_array()) return wrong_type("stop", "a string or an array of strings", *v);
  if (v->size() > kMaxStopStrings) {
    return invalid_request("stop", fmt::format("'stop' holds {} strings; at most {}", v->size(), kMaxStopStrings));
  }
  for (const Json& s : *v) {
    if (!s.is_string()) return wrong_type("stop", "a string or an array of strings", s);
    out.push_back(s.get<std::string>());
  }
  return std::nullopt;
}

// Known fields whose features met lacks yet: refused rather than ignored,
// since ignoring them would change what the answer means.
MaybeError refuse_unsupported(const Json& obj) {
  auto truthy = [](const Json& v) {
    return !(v.is_boolean() && !v.get<bool>()) && !(v.is_number() && v.get<double>() == 0.0) &&
           !(v.is_array() && v.empty());
  };
  for (const char* name : {"echo", "suffix", "functions"}) {
    const Json* v = field(obj, name);
    if (v != nullptr && truthy(*v)) return invalid_request(name, fmt::format("'{}' is not supported yet", name));
  }
  std::optional<int64_t> best_of;
  MET_API_RETURN_IF_ERROR(read_int(obj, "best_of", 1, 128, best_of));
  if (best_of && *best_of != 1) return invalid_request("best_of", "best_of > 1 is not supported yet");
  return std::nullopt;
}

// Logprobs: chat's `logprobs` (bool) with `top_logprobs` (0-20); the
// completions endpoint's legacy integer `logprobs` (0-20 alternatives).
MaybeError read_logprobs(const Json& obj, Endpoint endpoint, std::optional<int32_t>& out) {
  std::optional<int64_t> top;
  if (endpoint == Endpoint::kCompletions) {
    MET_API_RETURN_IF_ERROR(read_int(obj, "logprobs", 0, kMaxTopLogprobs, top));
    if (top) out = static_cast<int32_t>(*top);
    return std::nullopt;
  }
  bool wanted = false;
  MET_API_RETURN_IF_ERROR(read_bool(obj, "logprobs", wanted));
  MET_API_RETURN_IF_ERROR(read_int(obj, "top_logprobs", 0, kMaxTopLogprobs, top));
  if (top && !wanted) return invalid_request("top_logprobs", "'top_logprobs' requires 'logprobs': true");
  if (wanted) out = static_cast<int32_t>(top.value_or(0));
  return std::nullopt;
}

MaybeError read_max_tokens(const Json& obj, Endpoint endpoint, std::optional<int32_t>& out) {
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  std::optional<int64_t> max_tokens, max_completion_tokens;
  MET_API_RETURN_IF_ERROR(read_int(obj, "max_tokens", 1, kMax, max_tokens));
  if (endpoint == Endpoint::kChatCompletions) {
    MET_API_RETURN_IF_ERROR(read_int(obj, "max_completion_tokens", 1, kMax, max_completion_tokens));
  }
  if (max_completion_tokens) {
    out = static_cast<int32_t>(*max_completion_tokens);
  } else if (max_tokens) {
    out = static_cast<int32_t>(*max_tokens);
  }
  return std::nullopt;
}

// Fields both endpoints share: sampling, limits, stops, streaming, met's own.
// OpenAI's Predicted Outputs: {"type": "content", "content": a string or
// text parts, concatenated}.
MaybeError read_prediction(const Json& obj, std::optional<std::string>& out) {
  const Json* p = field(obj, "prediction");
  if (p == nullptr) return std::nullopt;
  if (!p->is_object()) return wrong_type("prediction", "an object", *p);
  const Json* type = field(*p, "type");
  if (type == nullptr || !type->is_string() || type->get<std::string>() != "content") {
    return invalid_request("prediction.type", "'prediction.type' must be \"content\"");
  }
  const Json* content = field(*p, "content");
  if (content != nullptr && content->is_string()) {
    out = content->get<std::string>();
    return std::nullopt;
  }
  if (content == nullptr || !content->is_array()) {
    return invalid_request("prediction.content", "'prediction.content' must be a string or an array of text parts");
  }
  std::string text;
  for (const Json& part : *content) {
    const Json* t = part.is_object() ? field(part, "text") : nullptr;
    const Json* kind = part.is_object() ? field(part, "type") : nullptr;
    if (t == nullptr || !t->is_string() || kind == nullptr || !kind->is_string() || kind->get<std::string>() != "text") {
      return invalid_request("prediction.content",
                             "'prediction.content' parts must be {\"type\": \"text\", \"text\": string}");
    }
    text += t->get<std::string>();
  }
  out = std::move(text);
  return std::nullopt;
}

// met's own "speculative": false (no drafts for this request, its prediction
// included), true (the server's settings) or {"max_draft_tokens": N}.
MaybeError read_speculative(const Json& obj, std::optional<int32_t>& max_draft_tokens) {
  const Json* s = field(obj, "speculative");
  if (s == nullptr || s->is_null()) return std::nullopt;
  if (s->is_boolean()) {
    if (!s->get<bool>()) max_draft_tokens = 0;
    return std::nullopt;
  }
  if (!s->is_object()) return wrong_type("speculative", "a boolean or an object", *s);
  std::optional<int64_t> n;
  MaybeError e = read_int(*s, "max_draft_tokens", 0, kMaxDraftTokens, n);
  if (e) e->param = "speculative.max_draft_tokens";
  if (e) return e;
  if (n) max_draft_tokens = static_cast<int32_t>(*n);
  return std::nullopt;
}

MaybeError read_common(const Json& obj, OpenAiRequest& r) {
  MET_API_RETURN_IF_ERROR(read_string(obj, "model", r.model));
  MET_API_RETURN_IF_ERROR(refuse_unsupported(obj));
  std::optional<int64_t> n, min_tokens;
  MET_API_RETURN_IF_ERROR(read_int(obj, "n", 1, kMaxChoices, n));
  if (n) r.n = static_cast<int32_t>(*n);
  r.has_seed = field(obj, "seed") != nullptr;
  MET_API_RETURN_IF_ERROR(read_max_tokens(obj, r.endpoint, r.max_tokens));
  MET_API_RETURN_IF_ERROR(read_sampling_fields(obj, r.engine.sampling, r.sampling_text, r.sampling_given));
  MET_API_RETURN_IF_ERROR(read_logprobs(obj, r.endpoint, r.engine.logprobs));
  std::optional<int64_t> prompt_logprobs;
  MET_API_RETURN_IF_ERROR(read_int(obj, "prompt_logprobs", 0, kMaxTopLogprobs, prompt_logprobs));
  if (prompt_logprobs) r.engine.prompt_logprobs = static_cast<int32_t>(*prompt_logprobs);
  MET_API_RETURN_IF_ERROR(read_agent_fields(obj, r.endpoint == Endpoint::kChatCompletions, r.agent));
  MET_API_RETURN_IF_ERROR(read_stop(obj, r.engine.stop_strings));
  MET_API_RETURN_IF_ERROR(read_prediction(obj, r.prediction));
  MET_API_RETURN_IF_ERROR(read_speculative(obj, r.engine.max_draft_tokens));
  MET_API_RETURN_IF_ERROR(read_bool(obj, "stream", r.stream));
  if (const Json* so = field(obj, "stream_options")) {
    if (!so->is_object()) return wrong_type("stream_options", "an object", *so);
    MaybeError e = read_bool(*so, "include_usage", r.include_usage);
    if (e) e->param = "stream_options.include_usage";
    if (e) return e;
  }
  std::string user;
  MET_API_RETURN_IF_ERROR(read_string(obj, "user", user));
  MET_API_RETURN_IF_ERROR(read_int(obj, "min_tokens", 0, std::numeric_limits<int32_t>::max(), min_tokens));
  if (min_tokens) r.engine.min_tokens = static_cast<int32_t>(*min_tokens);
  const int32_t budget = r.max_tokens.value_or(std::numeric_limits<int32_t>::max());
  if (r.engine.min_tokens > budget) {
    return invalid_request(
        "min_tokens", fmt::format("'min_tokens' ({}) must not exceed max_tokens ({})", r.engine.min_tokens, budget));
  }
  MET_API_RETURN_IF_ERROR(read_bool(obj, "ignore_eos", r.engine.ignore_eos));
  MET_API_RETURN_IF_ERROR(read_string(obj, "cache_salt", r.engine.cache_salt));
  std::optional<double> timeout_s;
  MET_API_RETURN_IF_ERROR(read_number(obj, "timeout", 0.0, kMaxTimeoutSeconds, true, timeout_s));
  if (timeout_s) {
    r.engine.timeout = std::chrono::duration_cast<Duration>(std::chrono::duration<double>(*timeout_s));
  }
  return std::nullopt;
}

ApiError bad_prompt(const std::string& what) {
  return invalid_request("prompt", fmt::format("'prompt' must be a string, an array of strings, an array of token "
                                               "ids, or an array of arrays of token ids; {}",
                                               what));
}

MaybeError read_token_ids(const Json& arr, std::vector<TokenId>& out) {
  if (arr.empty()) return bad_prompt("a prompt of token ids is empty");
  for (const Json& t : arr) {
    if (!t.is_number_integer()) return bad_prompt("an element is neither a string nor an integer");
    const bool huge = t.is_number_unsigned() && t.get<uint64_t>() > uint64_t{std::numeric_limits<TokenId>::max()};
    const int64_t id = huge ? int64_t{-1} : t.get<int64_t>();
    if (id < 0 || id > std::numeric_limits<TokenId>::max()) {
      return invalid_request("prompt", fmt::format("prompt token {} is {}, not a token id", out.size(), t.dump()));
    }
    out.push_back(static_cast<TokenId>(id));
  }
  return std::nullopt;
}

// One prompt of a batch: a string or an array of token ids.
MaybeError read_one_prompt(const Json& p, std::vector<CompletionPrompt>& out) {
  if (p.is_string()) {
    out.emplace_back(p.get<std::string>());
    return std::nullopt;
  }
  if (!p.is_array()) return bad_prompt(fmt::format("prompt {} is {}", out.size(), p.type_name()));
  std::vector<TokenId> ids;
  MET_API_RETURN_IF_ERROR(read_token_ids(p, ids));
  out.emplace_back(std::move(ids));
  return std::nullopt;
}

MaybeError read_prompt(const Json& obj, OpenAiRequest& r) {
  const Json* p = field(obj, "prompt");
  if (p == nullptr) return invalid_request("prompt", "'prompt' is required");
  if (p->is_string()) {
    r.prompts.emplace_back(p->get<std::string>());
    return std::nullopt;
  }
  if (!p->is_array()) return wrong_type("prompt", "a string or an array", *p);
  if (p->empty()) return bad_prompt("got an empty array");
  if (!p->front().is_string() && !p->front().is_array()) return read_one_prompt(*p, r.prompts);  // token ids
  if (p->size() > static_cast<size_t>(kMaxChoices)) {
    return invalid_request("prompt", fmt::format("'prompt' holds {} prompts; at most {}", p->size(), kMaxChoices));
  }
  for (const Json& one : *p) MET_API_RETURN_IF_ERROR(read_one_prompt(one, r.prompts));
  return std::nullopt;
}

// A message's content as one string: a string, null, or text parts joined.
MaybeError content_text(const Json& content, size_t index, std::string& out) {
  const std::string param = fmt::format("messages[{}].content", index);
  if (content.is_null()) return std::nullopt;
  if (content.is_string()) {
    out = content.get<std::string>();
    return std::nullopt;
  }
  if (!content.is_array())
    return invalid_request(param, fmt::format("'{}' must be a string or an array of text parts", param));
  for (const Json& part : content) {
    const Json* text = part.is_object() ? field(part, "text") : nullptr;
    const Json* type = part.is_object() ? field(part, "type") : nullptr;
    if (type == nullptr || !type->is_string() || type->get<std::string>() != "text" || text == nullptr ||
        !text->is_string()) {
      return invalid_request(param, fmt::format("'{}' parts must be {{\"type\": \"text\", \"text\": string}}; "
                                                "only text parts are supported",
                                                param));
    }
    if (!out.empty()) out += "\n";
    out += text->get<std::string>();
  }
  return std::nullopt;
}

MaybeError read_messages(const Json& obj, OpenAiRequest& r) {
  const Json* m = field(obj, "messages");
  if (m == nullptr) return invalid_request("messages", "'messages' is required");
  if (!m->is_array()) return wrong_type("messages", "an array", *m);
  if (m->empty()) return invalid_request("messages", "'messages' must hold at least one message");
  r.messages = Json::array();
  for (size_t i = 0; i < m->size(); ++i) {
    const Json& msg = (*m)[i];
    const std::string param = fmt::format("messages[{}]", i);
    if (!msg.is_object()) return invalid_request(param, fmt::format("'{}' must be an object", param));
    const Json* role = field(msg, "role");
    if (role == nullptr || !role->is_string()) {
      return invalid_request(param + ".role", fmt::format("'{}.role' must be a string", param));
    }
    std::string text;
    const auto content = msg.find("content");
    if (content != msg.end()) MET_API_RETURN_IF_ERROR(content_text(*content, i, text));
    Json copy = msg;
    copy["content"] = text;
    r.messages.push_back(std::move(copy));
  }
  return std::nullopt;
}

}  // namespace

ApiResult<OpenAiRequest> parse_openai_request(Endpoint endpoint, std::string_view body) {
  if (!is_valid_utf8(body)) return invalid_request(std::nullopt, "the request body is not valid UTF-8");
  Json obj;
  try {
    obj = Json::parse(body);
  } catch (const nlohmann::json::exception& e) {
    return invalid_request(std::nullopt, fmt::format("the request body is not valid JSON: {}", e.what()));
  }
  if (!obj.is_object()) return invalid_request(std::nullopt, "the request body must be a JSON object");
  OpenAiRequest r;
  r.endpoint = endpoint;
  MET_API_RETURN_IF_ERROR(read_common(obj, r));
  if (endpoint == Endpoint::kCompletions) {
    MET_API_RETURN_IF_ERROR(read_prompt(obj, r));
    if (r.prompts.size() * static_cast<size_t>(r.n) > static_cast<size_t>(kMaxChoices)) {
      return invalid_request("n", fmt::format("{} prompts x n = {} choices; at most {}", r.prompts.size(),
                                              r.prompts.size() * static_cast<size_t>(r.n), kMaxChoices));
    }
  } else {
    MET_API_RETURN_IF_ERROR(read_messages(obj, r));
  }
  return r;
}

}  // namespace met
