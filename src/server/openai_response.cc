// OpenAI response bodies. Tested by tests/server/openai_response_test.cc.
#include "server/openai_response.h"

#include <fmt/format.h>

#include "core/check.h"
#include "server/logprobs_json.h"

#include <algorithm>
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
  j["system_fingerprint"] = m.system_fingerprint;
  return j;
}

// The choice's "logprobs": null, or the endpoint's shape over `entries`.
Json logprobs_or_null(const ResponseMeta& m, bool wanted, std::span<const TokenLogprob> entries, size_t text_offset) {
  if (!wanted) return nullptr;
  MET_CHECK(m.tokenizer != nullptr, "logprobs need the response's tokenizer");
  if (is_chat(m)) return chat_logprobs_json(entries, *m.tokenizer);
  return completion_logprobs_json(entries, *m.tokenizer, text_offset);
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
  j["completion_tokens_details"] = Json{{"reasoning_tokens", u.reasoning_tokens},
                                        {"accepted_prediction_tokens", u.accepted_prediction_tokens},
                                        {"rejected_prediction_tokens", u.rejected_prediction_tokens}};
  return j;
}

void ChoiceOutput::add(const DeltaEvent& d) {
  text += d.text;
  logprobs.insert(logprobs.end(), d.logprobs.begin(), d.logprobs.end());
  prompt_logprobs.insert(prompt_logprobs.end(), d.prompt_logprobs.begin(), d.prompt_logprobs.end());
}

Usage total_usage(std::span<const Usage> per_choice, size_t choices_per_prompt) {
  Usage total;
  for (size_t i = 0; i < per_choice.size(); ++i) {
    if (i % std::max<size_t>(choices_per_prompt, 1) == 0) {
      total.prompt_tokens += per_choice[i].prompt_tokens;
      total.cached_prompt_tokens += per_choice[i].cached_prompt_tokens;
    }
    total.completion_tokens += per_choice[i].completion_tokens;
    total.reasoning_tokens += per_choice[i].reasoning_tokens;
    total.accepted_prediction_tokens += per_choice[i].accepted_prediction_tokens;
    total.rejected_prediction_tokens += per_choice[i].rejected_prediction_tokens;
  }
  return total;
}

Json completion_body(const ResponseMeta& meta, std::span<const ChoiceOutput> choices) {
  Json j = envelope(meta, is_chat(meta) ? "chat.completion" : "text_completion");
  Json list = Json::array();
  std::vector<Usage> usages;
  for (size_t i = 0; i < choices.size(); ++i) {
    const ChoiceOutput& c = choices[i];
    MET_CHECK(c.finish.has_value(), "choice {} has no finish", i);
    Json choice;
    choice["index"] = i;
    std::string reason = c.finish->finish_reason;
    if (is_chat(meta) && meta.shape.has_value()) {
      ChatShape shape = *meta.shape;
      shape.id_seed += i;
      shape.stream_tool_calls = false;
      ChatShaper shaper(shape);
      std::vector<ParseEvent> unused;
      shaper.feed(c.text, unused);
      const ParsedMessage m = shaper.finish(unused);
      choice["message"] = message_json(m);
      reason = shaped_finish_reason(reason, m);
    } else if (is_chat(meta)) {
      choice["message"] = Json{{"role", "assistant"}, {"content", c.text}, {"refusal", nullptr}};
    } else {
      choice["text"] = c.text;
    }
    choice["finish_reason"] = reason;
    choice["logprobs"] = logprobs_or_null(meta, c.wants_logprobs, c.logprobs, 0);
    if (c.wants_prompt_logprobs) {
      MET_CHECK(meta.tokenizer != nullptr, "prompt logprobs need the response's tokenizer");
      choice["prompt_logprobs"] = prompt_logprobs_json(c.prompt_logprobs, *meta.tokenizer);
    }
    list.push_back(std::move(choice));
    usages.push_back(c.finish->usage);
  }
  j["choices"] = std::move(list);
  j["usage"] = usage_json(total_usage(usages, meta.choices_per_prompt));
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

SseEncoder::SseEncoder(ResponseMeta meta, bool include_usage, size_t num_choices, bool logprobs)
    : meta_(std::move(meta)), include_usage_(include_usage), logprobs_(logprobs), choices_(num_choices) {
  if (!meta_.shape.has_value()) return;
  for (size_t i = 0; i < choices_.size(); ++i) {
    ChatShape shape = *meta_.shape;
    shape.id_seed += i;
    choices_[i].shaper = std::make_unique<ChatShaper>(shape);
  }
}

Json SseEncoder::chunk(size_t index, Json body, const std::string* finish_reason, const DeltaEvent* logprobs_from) {
  Json j = envelope(meta_, is_chat(meta_) ? "chat.completion.chunk" : "text_completion");
  Json choice;
  choice["index"] = index;
  choice[is_chat(meta_) ? "delta" : "text"] = std::move(body);
  choice["finish_reason"] = finish_reason != nullptr ? Json(*finish_reason) : Json(nullptr);
  choice["logprobs"] = nullptr;
  if (logprobs_from != nullptr && logprobs_) {
    choice["logprobs"] = is_chat(meta_) ? chat_logprobs_json(logprobs_from->logprobs, *meta_.tokenizer)
                                        : completion_logprobs_json(logprobs_from->logprobs, *meta_.tokenizer,
                                                                   choices_[index].text_offset);
  }
  if (logprobs_from != nullptr && prompt_logprobs_ && !logprobs_from->prompt_logprobs.empty()) {
    choice["prompt_logprobs"] = prompt_logprobs_json(logprobs_from->prompt_logprobs, *meta_.tokenizer);
  }
  j["choices"] = Json::array({std::move(choice)});
  if (include_usage_) j["usage"] = nullptr;
  return j;
}

std::string SseEncoder::start() {
  if (!is_chat(meta_)) return "";
  std::string out;
  for (size_t i = 0; i < choices_.size(); ++i) {
    out += sse_event(chunk(i, Json{{"role", "assistant"}, {"content", ""}, {"refusal", nullptr}}, nullptr, nullptr));
  }
  return out;
}

// A delta's chunks: its text as one piece (or the shaper's parts), with the
// logprobs on the first.
std::string SseEncoder::encode_delta(size_t index, const DeltaEvent& d) {
  const bool has_logprobs = (logprobs_ && !d.logprobs.empty()) || (prompt_logprobs_ && !d.prompt_logprobs.empty());
  const DeltaEvent* lp = has_logprobs ? &d : nullptr;
  if (choices_[index].shaper == nullptr) {
    if (d.text.empty() && lp == nullptr) return "";
    return sse_event(chunk(index, is_chat(meta_) ? Json{{"content", d.text}} : Json(d.text), nullptr, lp));
  }
  choices_[index].shaper->feed(d.text, events_);
  std::vector<Json> parts = chat_delta_json(events_);
  if (parts.empty() && lp != nullptr) parts.push_back(Json::object());
  std::string out;
  for (Json& part : parts) {
    out += sse_event(chunk(index, std::move(part), nullptr, lp));
    lp = nullptr;
  }
  return out;
}

std::string SseEncoder::encode_finish(size_t index, const FinishEvent& f) {
  ChoiceState& c = choices_[index];
  MET_CHECK(!c.usage.has_value(), "choice {} finished twice", index);
  c.usage = f.usage;
  std::string out;
  std::string reason = f.finish_reason;
  if (c.shaper != nullptr) {
    const ParsedMessage m = c.shaper->finish(events_);
    for (Json& part : chat_delta_json(events_)) out += sse_event(chunk(index, std::move(part), nullptr, nullptr));
    reason = shaped_finish_reason(reason, m);
  }
  out += sse_event(chunk(index, is_chat(meta_) ? Json::object() : Json(""), &reason, nullptr));
  if (++num_finished_ < choices_.size()) return out;
  if (include_usage_) {
    std::vector<Usage> usages;
    for (const ChoiceState& s : choices_) usages.push_back(*s.usage);
    Json u = envelope(meta_, is_chat(meta_) ? "chat.completion.chunk" : "text_completion");
    u["choices"] = Json::array();
    u["usage"] = usage_json(total_usage(usages, meta_.choices_per_prompt));
    out += sse_event(u);
  }
  return out + std::string(kSseDone);
}

std::string SseEncoder::encode(size_t index, const StreamEvent& event) {
  MET_CHECK(index < choices_.size(), "choice {} of {}", index, choices_.size());
  if (const auto* d = std::get_if<DeltaEvent>(&event)) return encode_delta(index, *d);
  if (const auto* f = std::get_if<FinishEvent>(&event)) return encode_finish(index, *f);
  return fail(error_of(std::get<ErrorEvent>(event)));
}

std::string SseEncoder::fail(const ApiError& error) {
  Json j;
  j["error"] = error_object(error);
  return sse_event(j) + std::string(kSseDone);
}

}  // namespace met
