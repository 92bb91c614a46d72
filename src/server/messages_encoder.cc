// MessagesEncoder. Tested by tests/server/messages_encoder_test.cc.
#include "server/messages_encoder.h"

#include <fmt/format.h>

#include <utility>
#include <variant>

#include "core/check.h"

namespace met {

MessagesStop messages_stop(const FinishEvent& f, bool ended_with_tool_call, std::span<const std::string> stops) {
  if (f.finish_reason == "length" || f.finish_reason == "timeout") return {"max_tokens", std::nullopt};
  if (f.stop_string_index && *f.stop_string_index < stops.size()) {
    return {"stop_sequence", stops[*f.stop_string_index]};
  }
  if (f.finish_reason == "tool_calls" || ended_with_tool_call) return {"tool_use", std::nullopt};
  return {"end_turn", std::nullopt};
}

nlohmann::ordered_json messages_usage_json(const Usage& u) {
  nlohmann::ordered_json j;
  j["input_tokens"] = u.prompt_tokens - u.cached_prompt_tokens;
  j["cache_creation_input_tokens"] = 0;
  j["cache_read_input_tokens"] = u.cached_prompt_tokens;
  j["output_tokens"] = u.completion_tokens;
  return j;
}

std::string make_message_id(uint64_t unique) { return fmt::format("msg_{:016x}", unique); }

std::string messages_sse_event(const nlohmann::ordered_json& j) {
  return fmt::format("event: {}\ndata: {}\n\n", j.at("type").get<std::string>(), dump_json(j));
}

MessagesEncoder::MessagesEncoder(ResponseMeta meta, std::vector<std::string> stop_sequences)
    : meta_(std::move(meta)), stop_sequences_(std::move(stop_sequences)) {
  if (meta_.shape) shaper_ = std::make_unique<ChatShaper>(*meta_.shape);
}

MessagesEncoder::Json MessagesEncoder::message(const Json& usage) const {
  Json m;
  m["id"] = meta_.id;
  m["type"] = "message";
  m["role"] = "assistant";
  m["model"] = meta_.model;
  m["content"] = Json::array();
  m["stop_reason"] = nullptr;
  m["stop_sequence"] = nullptr;
  m["usage"] = usage;
  return m;
}

void MessagesEncoder::feed(std::string_view text, std::vector<Json>& out) {
  if (text.empty()) return;
  if (shaper_) {
    shaper_->feed(text, events_);
  } else {
    // The variant is built in the vector from the ContentDelta: GCC 12 -O3
    // misreads moving a variant temporary here as reading the inactive
    // alternatives (-Wmaybe-uninitialized).
    events_.emplace_back(ContentDelta{std::string(text)});
  }
  for (const ParseEvent& e : events_) blocks_.add(e, out);
  events_.clear();
}

bool MessagesEncoder::finish(std::vector<Json>& out) {
  bool tool_call = false;
  if (shaper_) tool_call = shaper_->finish(events_).ended_with_tool_call;
  for (const ParseEvent& e : events_) blocks_.add(e, out);
  events_.clear();
  blocks_.close(out);
  return tool_call;
}

std::string MessagesEncoder::start() {
  Usage prompt;
  prompt.prompt_tokens = static_cast<int32_t>(meta_.num_prompt_tokens);
  return messages_sse_event(Json{{"type", "message_start"}, {"message", message(messages_usage_json(prompt))}});
}

std::string MessagesEncoder::encode(size_t index, const StreamEvent& event) {
  (void)index;  // one choice
  if (done_) return "";
  if (const auto* e = std::get_if<ErrorEvent>(&event)) return fail(error_of(*e));
  std::vector<Json> out;
  if (const auto* d = std::get_if<DeltaEvent>(&event)) feed(d->text, out);
  if (const auto* f = std::get_if<FinishEvent>(&event)) {
    const MessagesStop stop = messages_stop(*f, finish(out), stop_sequences_);
    Json delta{{"stop_reason", stop.reason}, {"stop_sequence", stop.sequence ? Json(*stop.sequence) : Json()}};
    out.push_back(
        Json{{"type", "message_delta"}, {"delta", std::move(delta)}, {"usage", messages_usage_json(f->usage)}});
    out.push_back(Json{{"type", "message_stop"}});
    done_ = true;
  }
  std::string bytes;
  for (const Json& j : out) bytes += messages_sse_event(j);
  return bytes;
}

std::string MessagesEncoder::fail(const ApiError& error) {
  done_ = true;
  return fmt::format("event: error\ndata: {}\n\n", error_body(error, ErrorStyle::kAnthropic));
}

std::string MessagesEncoder::body(std::span<const ChoiceOutput> choices) {
  MET_CHECK(choices.size() == 1 && choices[0].finish.has_value(), "a message has one finished choice");
  const ChoiceOutput& c = choices[0];
  if (meta_.shape) {
    ChatShape shape = *meta_.shape;
    shape.stream_tool_calls = false;  // only complete, valid calls
    shaper_ = std::make_unique<ChatShaper>(shape);
  }
  std::vector<Json> events;
  feed(c.text, events);
  const MessagesStop stop = messages_stop(*c.finish, finish(events), stop_sequences_);
  ContentFold fold;
  for (const Json& e : events) fold.add(e);
  Json m = message(messages_usage_json(c.finish->usage));
  m["content"] = fold.take();
  m["stop_reason"] = stop.reason;
  m["stop_sequence"] = stop.sequence ? Json(*stop.sequence) : Json();
  return dump_json(m);
}

}  // namespace met
