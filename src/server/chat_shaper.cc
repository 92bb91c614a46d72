// ChatShaper. Tested by tests/server/chat_shaper_test.cc.
#include "server/chat_shaper.h"

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
  if (shape_.forced != ForcedTools::kNone) return;
  ParserOptions o;
  o.starts_in_thinking = shape_.starts_in_thinking;
  o.parse_tool_calls = shape_.parse_tool_calls;
  o.id_seed = shape_.id_seed;
  o.stream_tool_calls = shape_.stream_tool_calls;
  o.tool_names = shape_.tool_names;
  parser_ = make_output_parser(shape_.format, o);
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

void ChatShaper::feed(std::string_view text, std::vector<ParseEvent>& events) {
  if (text.empty()) return;
  if (shape_.forced == ForcedTools::kNone) {
    parser_->feed(text, events);
    return;
  }
  forced_text_ += text;
  if (shape_.forced == ForcedTools::kNamed) {
    // The arguments stream as they come; the call opens with the first piece.
    if (named_id_.empty()) {
      named_id_ = ids_.next();
      events.push_back(ToolCallBegin{0, named_id_, shape_.forced_name});
    }
    events.push_back(ToolCallArgumentsDelta{0, std::string(text)});
  }
}

ParsedMessage ChatShaper::finish_forced(std::vector<ParseEvent>& events) {
  ParsedMessage m;
  if (shape_.forced == ForcedTools::kNamed) {
    if (named_id_.empty()) {
      named_id_ = ids_.next();
      events.push_back(ToolCallBegin{0, named_id_, shape_.forced_name});
    }
    m.tool_calls.push_back(ToolCall{named_id_, shape_.forced_name, forced_text_});
    m.ended_with_tool_call = true;
    return m;
  }
  // "required": [{"name", "parameters"}, ...]; a cut-off array stays content.
  const Json calls = Json::parse(forced_text_, nullptr, /*allow_exceptions=*/false);
  if (!calls.is_array()) {
    m.content = forced_text_;
    events.push_back(ContentDelta{forced_text_});
    return m;
  }
  for (const Json& c : calls) {
    ToolCall call{ids_.next(), c.value("name", std::string()), c.contains("parameters") ? c["parameters"].dump() : "{}"};
    events.push_back(ToolCallBegin{m.tool_calls.size(), call.id, call.name});
    events.push_back(ToolCallArgumentsDelta{m.tool_calls.size(), call.arguments});
    m.tool_calls.push_back(std::move(call));
  }
  m.ended_with_tool_call = !m.tool_calls.empty();
  return m;
}

ParsedMessage ChatShaper::finish(std::vector<ParseEvent>& events) {
  if (shape_.forced != ForcedTools::kNone) return finish_forced(events);
  return parser_->finish(events);
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
