// ResponsesEncoder. Tested by tests/server/responses_encoder_test.cc.
#include "server/responses_encoder.h"

#include <fmt/format.h>

#include <utility>
#include <variant>

#include "core/check.h"

namespace met {
namespace {

using Json = nlohmann::ordered_json;

bool all_space(std::string_view s) { return s.find_first_not_of(" \t\r\n") == std::string_view::npos; }

Json responses_usage(const Usage& u) {
  Json j;
  j["input_tokens"] = u.prompt_tokens;
  j["input_tokens_details"] = Json{{"cached_tokens", u.cached_prompt_tokens}};
  j["output_tokens"] = u.completion_tokens;
  j["output_tokens_details"] = Json{{"reasoning_tokens", u.reasoning_tokens}};
  j["total_tokens"] = u.prompt_tokens + u.completion_tokens;
  return j;
}

// incomplete_details.reason for an engine finish; nullopt: completed.
std::optional<std::string> incomplete_reason(const std::string& finish_reason) {
  if (finish_reason == "length") return "max_output_tokens";
  if (finish_reason == "timeout") return "timeout";
  return std::nullopt;
}

Json output_text_part(std::string text) {
  return Json{{"type", "output_text"}, {"text", std::move(text)}, {"annotations", Json::array()}};
}

Json reasoning_text_part(std::string text) { return Json{{"type", "reasoning_text"}, {"text", std::move(text)}}; }

Json summary_text_part(std::string text) { return Json{{"type", "summary_text"}, {"text", std::move(text)}}; }

}  // namespace

std::string make_responses_id(uint64_t unique) { return fmt::format("resp_{:016x}", unique); }

Json response_object(const ResponseMeta& meta, const Json& echo, std::string_view status, Json output,
                     const Usage* usage) {
  Json j;
  j["id"] = meta.id;
  j["object"] = "response";
  j["created_at"] = meta.created;
  j["status"] = status;
  j["background"] = false;
  j["error"] = nullptr;
  j["incomplete_details"] = nullptr;
  j["model"] = meta.model;
  for (const auto& [key, value] : echo.items()) j[key] = value;
  j["output"] = std::move(output);
  j["usage"] = usage != nullptr ? responses_usage(*usage) : Json(nullptr);
  return j;
}

ResponsesEncoder::ResponsesEncoder(ResponseMeta meta, Json echo, bool reasoning_summary, ResponseDone on_done)
    : meta_(std::move(meta)),
      echo_(std::move(echo)),
      reasoning_summary_(reasoning_summary),
      on_done_(std::move(on_done)) {
  MET_CHECK(meta_.num_choices == 1, "a Responses API response has one choice, not {}", meta_.num_choices);
  if (meta_.shape.has_value()) shaper_ = std::make_unique<ChatShaper>(*meta_.shape);
}

void ResponsesEncoder::emit(const char* type, Json fields) {
  Json j;
  j["type"] = type;
  j["sequence_number"] = sequence_++;
  for (auto& [key, value] : fields.items()) j[key] = std::move(value);
  out_ += fmt::format("event: {}\ndata: {}\n\n", type, dump_json(j));
}

std::string ResponsesEncoder::item_id(const char* prefix) const {
  const std::string_view id = meta_.id;
  const std::string_view unique = id.substr(id.find('_') == std::string_view::npos ? 0 : id.find('_') + 1);
  return fmt::format("{}_{}_{}", prefix, unique, output_.size());
}

Json ResponsesEncoder::item_ref() const {
  return Json{{"item_id", item_["id"]}, {"output_index", output_.size()}};
}

std::string ResponsesEncoder::start() {
  const Json in_progress = response_object(meta_, echo_, "in_progress", Json::array(), nullptr);
  emit("response.created", Json{{"response", in_progress}});
  emit("response.in_progress", Json{{"response", in_progress}});
  return std::exchange(out_, {});
}

void ResponsesEncoder::dispatch(std::vector<ParseEvent>& events) {
  for (const ParseEvent& e : events) {
    if (const auto* r = std::get_if<ReasoningDelta>(&e)) on_reasoning(r->text);
    if (const auto* c = std::get_if<ContentDelta>(&e)) on_content(c->text);
    if (const auto* b = std::get_if<ToolCallBegin>(&e)) on_call_begin(*b);
    if (const auto* a = std::get_if<ToolCallArgumentsDelta>(&e)) on_call_arguments(*a);
  }
  events.clear();
}

void ResponsesEncoder::open_reasoning() {
  close_item();
  open_ = Open::kReasoning;
  item_ = Json{{"id", item_id("rs")}, {"type", "reasoning"}, {"summary", Json::array()}, {"content", Json::array()}};
  emit("response.output_item.added", Json{{"output_index", output_.size()}, {"item", item_}});
  if (reasoning_summary_) {
    Json part = item_ref();
    part["summary_index"] = 0;
    part["part"] = summary_text_part("");
    emit("response.reasoning_summary_part.added", std::move(part));
  }
  Json part = item_ref();
  part["content_index"] = 0;
  part["part"] = reasoning_text_part("");
  emit("response.content_part.added", std::move(part));
}

void ResponsesEncoder::on_reasoning(const std::string& text) {
  if (text.empty()) return;
  if (open_ != Open::kReasoning) open_reasoning();
  text_ += text;
  Json delta = item_ref();
  delta["content_index"] = 0;
  delta["delta"] = text;
  emit("response.reasoning_text.delta", std::move(delta));
  if (!reasoning_summary_) return;
  Json summary = item_ref();
  summary["summary_index"] = 0;
  summary["delta"] = text;
  emit("response.reasoning_summary_text.delta", std::move(summary));
}

void ResponsesEncoder::close_reasoning() {
  Json done = item_ref();
  done["content_index"] = 0;
  done["text"] = text_;
  emit("response.reasoning_text.done", done);
  done.erase("text");
  done["part"] = reasoning_text_part(text_);
  emit("response.content_part.done", std::move(done));
  item_["content"] = Json::array({reasoning_text_part(text_)});
  if (!reasoning_summary_) return;
  Json summary = item_ref();
  summary["summary_index"] = 0;
  summary["text"] = text_;
  emit("response.reasoning_summary_text.done", summary);
  summary.erase("text");
  summary["part"] = summary_text_part(text_);
  emit("response.reasoning_summary_part.done", std::move(summary));
  item_["summary"] = Json::array({summary_text_part(text_)});
}

void ResponsesEncoder::open_message() {
  close_item();
  open_ = Open::kMessage;
  item_ = Json{{"id", item_id("msg")}, {"type", "message"}, {"status", "in_progress"}, {"role", "assistant"},
               {"content", Json::array()}};
  emit("response.output_item.added", Json{{"output_index", output_.size()}, {"item", item_}});
  Json part = item_ref();
  part["content_index"] = 0;
  part["part"] = output_text_part("");
  emit("response.content_part.added", std::move(part));
}

void ResponsesEncoder::on_content(const std::string& text) {
  if (text.empty()) return;
  std::string shown = text;
  if (open_ != Open::kMessage) {
    if (all_space(text)) {
      held_space_ += text;
      return;
    }
    const bool first_item = output_.empty() && open_ == Open::kNone;
    shown = first_item ? std::exchange(held_space_, {}) + text : text.substr(text.find_first_not_of(" \t\r\n"));
    held_space_.clear();
    open_message();
  }
  message_delta(shown);
}

void ResponsesEncoder::message_delta(const std::string& shown) {
  text_ += shown;
  Json delta = item_ref();
  delta["content_index"] = 0;
  delta["delta"] = shown;
  delta["logprobs"] = Json::array();
  emit("response.output_text.delta", std::move(delta));
}

void ResponsesEncoder::close_message() {
  Json done = item_ref();
  done["content_index"] = 0;
  done["text"] = text_;
  done["logprobs"] = Json::array();
  emit("response.output_text.done", done);
  done.erase("text");
  done.erase("logprobs");
  done["part"] = output_text_part(text_);
  emit("response.content_part.done", std::move(done));
  item_["status"] = "completed";
  item_["content"] = Json::array({output_text_part(text_)});
}

void ResponsesEncoder::on_call_begin(const ToolCallBegin& begin) {
  close_item();
  held_space_.clear();
  open_ = Open::kCall;
  open_call_ = begin.index;
  call_output_[begin.index] = output_.size();
  item_ = Json{{"id", item_id("fc")}, {"type", "function_call"}, {"status", "in_progress"}, {"arguments", ""},
               {"call_id", begin.id}, {"name", begin.name}};
  emit("response.output_item.added", Json{{"output_index", output_.size()}, {"item", item_}});
}

void ResponsesEncoder::on_call_arguments(const ToolCallArgumentsDelta& delta) {
  if (delta.text.empty()) return;
  if (open_ != Open::kCall || open_call_ != delta.index) {
    // A piece of a call already closed (parsers send a call's pieces before
    // the next begins): kept in the final output only.
    const auto at = call_output_.find(delta.index);
    if (at == call_output_.end()) return;
    Json& item = output_[at->second];
    item["arguments"] = item["arguments"].get<std::string>() + delta.text;
    return;
  }
  text_ += delta.text;
  Json d = item_ref();
  d["delta"] = delta.text;
  emit("response.function_call_arguments.delta", std::move(d));
}

void ResponsesEncoder::close_item() {
  switch (open_) {
    case Open::kNone: return;
    case Open::kReasoning: close_reasoning(); break;
    case Open::kMessage: close_message(); break;
    case Open::kCall: {
      Json done = item_ref();
      done["name"] = item_["name"];
      done["arguments"] = text_;
      emit("response.function_call_arguments.done", std::move(done));
      item_["arguments"] = text_;
      item_["status"] = "completed";
      open_call_.reset();
      break;
    }
  }
  emit("response.output_item.done", Json{{"output_index", output_.size()}, {"item", item_}});
  output_.push_back(std::exchange(item_, Json()));
  text_.clear();
  open_ = Open::kNone;
}

Json ResponsesEncoder::finish(const FinishEvent& f) {
  close_item();
  if (output_.empty()) {
    // Nothing but whitespace (or nothing) came: one message holds it.
    const std::string space = std::exchange(held_space_, {});
    open_message();
    if (!space.empty()) message_delta(space);
    close_item();
  }
  ended_ = true;
  const std::optional<std::string> incomplete = incomplete_reason(f.finish_reason);
  Json response = response_object(meta_, echo_, incomplete ? "incomplete" : "completed", output_, &f.usage);
  if (incomplete) response["incomplete_details"] = Json{{"reason", *incomplete}};
  if (on_done_) on_done_(response);
  return response;
}

std::string ResponsesEncoder::encode(size_t index, const StreamEvent& event) {
  MET_CHECK(index == 0, "a Responses API response has one choice, not {}", index + 1);
  if (ended_) return "";
  if (const auto* d = std::get_if<DeltaEvent>(&event)) {
    if (shaper_ == nullptr) {
      on_content(d->text);
    } else {
      shaper_->feed(d->text, events_);
      dispatch(events_);
    }
  } else if (const auto* f = std::get_if<FinishEvent>(&event)) {
    if (shaper_ != nullptr) {
      (void)shaper_->finish(events_);
      dispatch(events_);
    }
    Json response = finish(*f);
    const char* type = response["status"] == "completed" ? "response.completed" : "response.incomplete";
    emit(type, Json{{"response", std::move(response)}});
  } else {
    return fail(error_of(std::get<ErrorEvent>(event)));
  }
  return std::exchange(out_, {});
}

std::string ResponsesEncoder::fail(const ApiError& error) {
  if (ended_) return std::exchange(out_, {});
  ended_ = true;
  Json response = response_object(meta_, echo_, "failed", output_, nullptr);
  response["error"] = Json{{"code", error.status >= 500 ? "server_error" : "invalid_request"},
                           {"message", error.message}};
  emit("response.failed", Json{{"response", std::move(response)}});
  return std::exchange(out_, {});
}

// The whole text shaped at once (only complete, valid calls kept), its
// parts made into items by the stream's own steps; the events are dropped.
std::string ResponsesEncoder::body(std::span<const ChoiceOutput> choices) {
  MET_CHECK(choices.size() == 1 && choices[0].finish.has_value(), "a Responses API body needs its one finish");
  const ChoiceOutput& c = choices[0];
  if (meta_.shape.has_value()) {
    ChatShape shape = *meta_.shape;
    shape.stream_tool_calls = false;
    ChatShaper shaper(shape);
    std::vector<ParseEvent> unused;
    shaper.feed(c.text, unused);
    const ParsedMessage m = shaper.finish(unused);
    on_reasoning(m.reasoning_content);
    on_content(m.content);
    for (size_t i = 0; i < m.tool_calls.size(); ++i) {
      on_call_begin(ToolCallBegin{i, m.tool_calls[i].id, m.tool_calls[i].name});
      on_call_arguments(ToolCallArgumentsDelta{i, m.tool_calls[i].arguments});
    }
  } else {
    on_content(c.text);
  }
  Json response = finish(*c.finish);
  out_.clear();
  return dump_json(response);
}

}  // namespace met
