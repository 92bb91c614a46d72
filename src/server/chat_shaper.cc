// ChatShaper. Tested by tests/server/chat_shaper_test.cc.
#include "server/chat_shaper.h"

#include <algorithm>
#include <utility>

namespace met {
namespace {

using Json = nlohmann::ordered_json;

Json tool_call_delta(size_t index, const std::string* id, const std::string* name, const std::string& args) {
  Json call;
  call["index"] = index;
  if (id != nullptr) {
    call["id"] = *id;
    call["type"] = "function";
  }
  Json fn = Json::object();
  if (name != nullptr) fn["name"] = *name;
  fn["arguments"] = args;
  call["function"] = std::move(fn);
  return Json{{"tool_calls", Json::array({std::move(call)})}};
}

Json tool_calls_json(const std::vector<ToolCall>& calls) {
  Json arr = Json::array();
  for (const ToolCall& c : calls) {
    arr.push_back(Json{{"id", c.id}, {"type", "function"},
                       {"function", Json{{"name", c.name}, {"arguments", c.arguments}}}});
  }
  return arr;
}

}  // namespace

ChatShaper::ChatShaper(const ChatShape& shape) : shape_(shape), ids_(shape.id_seed) {
  ParserOptions o;
  o.starts_in_thinking = shape_.starts_in_thinking;
  o.parse_tool_calls = shape_.parse_tool_calls && shape_.forced == ForcedTools::kNone;
  o.id_seed = shape_.id_seed;
  o.stream_tool_calls = shape_.stream_tool_calls;
  o.tool_names = shape_.tool_names;
  parser_ = make_output_parser(shape_.format, o);
  if (shape_.forced == ForcedTools::kNone) return;
  std::optional<std::string> name;
  if (shape_.forced == ForcedTools::kNamed) name = shape_.forced_name;
  forced_ = std::make_unique<ForcedCalls>(std::move(name), shape_.stream_tool_calls, ids_);
}

std::vector<Json> chat_delta_json(std::vector<ParseEvent>& events) {
  std::vector<Json> out;
  for (ParseEvent& e : events) {
    if (auto* r = std::get_if<ReasoningDelta>(&e)) out.push_back(Json{{"reasoning_content", std::move(r->text)}});
    if (auto* c = std::get_if<ContentDelta>(&e)) out.push_back(Json{{"content", std::move(c->text)}});
    if (auto* b = std::get_if<ToolCallBegin>(&e)) out.push_back(tool_call_delta(b->index, &b->id, &b->name, ""));
    if (auto* a = std::get_if<ToolCallArgumentsDelta>(&e)) {
      out.push_back(tool_call_delta(a->index, nullptr, nullptr, a->text));
    }
  }
  events.clear();
  return out;
}

void ChatShaper::route_forced(std::vector<ParseEvent>& from, std::vector<ParseEvent>& events) {
  for (ParseEvent& e : from) {
    if (auto* c = std::get_if<ContentDelta>(&e)) {
      forced_->feed(c->text, events);
    } else {
      events.push_back(std::move(e));  // reasoning (the parser makes no calls here)
    }
  }
  from.clear();
}

void ChatShaper::keep_one_call(std::vector<ParseEvent>& events, size_t from) const {
  if (!shape_.one_call) return;
  auto later_call = [](const ParseEvent& e) {
    if (const auto* b = std::get_if<ToolCallBegin>(&e)) return b->index > 0;
    if (const auto* a = std::get_if<ToolCallArgumentsDelta>(&e)) return a->index > 0;
    return false;
  };
  events.erase(std::remove_if(events.begin() + static_cast<ptrdiff_t>(from), events.end(), later_call),
               events.end());
}

void ChatShaper::feed(std::string_view text, std::vector<ParseEvent>& events) {
  if (text.empty()) return;
  const size_t from = events.size();
  if (!forced_) {
    parser_->feed(text, events);
  } else {
    parser_->feed(text, scratch_);
    route_forced(scratch_, events);
  }
  keep_one_call(events, from);
}

ParsedMessage ChatShaper::finish(std::vector<ParseEvent>& events) {
  const size_t from = events.size();
  ParsedMessage m;
  if (!forced_) {
    m = parser_->finish(events);
  } else {
    ParsedMessage split = parser_->finish(scratch_);
    route_forced(scratch_, events);
    m.reasoning_content = std::move(split.reasoning_content);
    forced_->finish(m, events);
  }
  keep_one_call(events, from);
  if (shape_.one_call && m.tool_calls.size() > 1) m.tool_calls.resize(1);
  return m;
}

std::string shaped_finish_reason(const std::string& engine_reason, const ParsedMessage& m) {
  return engine_reason == "stop" && m.ended_with_tool_call ? "tool_calls" : engine_reason;
}

Json message_json(const ParsedMessage& m) {
  Json msg;
  msg["role"] = "assistant";
  msg["content"] = m.content.empty() && !m.tool_calls.empty() ? Json(nullptr) : Json(m.content);
  msg["refusal"] = nullptr;  // met's models give no refusals; OpenAI's clients read the field
  if (!m.reasoning_content.empty()) msg["reasoning_content"] = m.reasoning_content;
  if (!m.tool_calls.empty()) msg["tool_calls"] = tool_calls_json(m.tool_calls);
  return msg;
}

}  // namespace met
