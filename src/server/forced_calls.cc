// ForcedCalls. A byte scanner over the "required" array that tracks only
// what it needs: the element's depth, strings, and which key's value is open.
// Tested by tests/server/chat_shaper_test.cc.
#include "server/forced_calls.h"

#include <nlohmann/json.hpp>
#include <utility>

#include "chat/output/json_prefix.h"

namespace met {
namespace {

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

std::string_view trim_end(std::string_view s) {
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

size_t first_non_space(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && is_space(s[i])) ++i;
  return i;
}

}  // namespace

ForcedCalls::ForcedCalls(std::optional<std::string> name, bool stream, ToolCallIds& ids)
    : named_(std::move(name)), stream_(stream), ids_(ids) {}

void ForcedCalls::begin_call(const std::string& name, std::vector<ParseEvent>& events) {
  open_ = ToolCall{ids_.next(), name, ""};
  closing_ = "{}";
  events.push_back(ToolCallBegin{calls_.size(), open_->id, name});
}

void ForcedCalls::stream_args(size_t args_begin, size_t args_end, std::vector<ParseEvent>& events) {
  const std::string_view args = std::string_view(text_).substr(args_begin, args_end - args_begin);
  const std::optional<JsonPrefix> p = json_object_prefix(args);
  if (!p) return;  // not an object: it goes out whole once complete
  const std::string& sent = open_->arguments;
  if (p->safe_end <= sent.size()) return;
  std::string piece(args.substr(sent.size(), p->safe_end - sent.size()));
  open_->arguments += piece;
  closing_ = p->closing;
  events.push_back(ToolCallArgumentsDelta{calls_.size(), std::move(piece)});
}

void ForcedCalls::end_call(std::optional<std::string_view> whole_args, std::vector<ParseEvent>& events) {
  std::string rest;
  if (whole_args) {
    rest = std::string(whole_args->substr(open_->arguments.size()));
  } else {
    rest = closing_;  // cut off: what was sent, closed as it stands
  }
  open_->arguments += rest;
  if (!rest.empty()) events.push_back(ToolCallArgumentsDelta{calls_.size(), std::move(rest)});
  calls_.push_back(std::move(*open_));
  open_.reset();
}

void ForcedCalls::value_closed(size_t end) {
  if (key_ == "name") {
    const nlohmann::json v =
        nlohmann::json::parse(text_.begin() + static_cast<ptrdiff_t>(value_begin_),
                              text_.begin() + static_cast<ptrdiff_t>(end), nullptr, /*allow_exceptions=*/false);
    if (v.is_string()) element_.name = v.get<std::string>();
  }
  if (key_ == "parameters") element_.args_end = end;
  value_open_ = false;
  at_ = At::kAfterValue;
}

void ForcedCalls::element_closed(std::vector<ParseEvent>& events) {
  const Element e = std::exchange(element_, Element{});
  at_ = At::kElementStart;
  depth_ = 0;
  value_open_ = false;
  if (!e.name || e.args_begin == std::string::npos || e.args_end == std::string::npos) {
    if (open_) end_call(std::nullopt, events);
    return;
  }
  const std::string_view whole = std::string_view(text_).substr(e.args_begin, e.args_end - e.args_begin);
  if (!open_) begin_call(*e.name, events);
  end_call(whole, events);
}

// A byte inside a string (a key or a value).
void ForcedCalls::scan_string_byte(char c) {
  if (escaped_) {
    escaped_ = false;
  } else if (c == '\\') {
    escaped_ = true;
  } else if (c == '"') {
    in_string_ = false;
    if (at_ == At::kKey) at_ = At::kColon;
    if (at_ == At::kValue && depth_ == 1) value_closed(pos_ + 1);  // a string value of the element
  } else if (at_ == At::kKey) {
    key_ += c;
  }
}

// A byte of a key's value: its first byte, inside an object or array value,
// or the delimiter that ends a number or literal.
void ForcedCalls::scan_value_byte(char c, std::vector<ParseEvent>& events) {
  if (!value_open_) {
    if (is_space(c)) return;
    value_open_ = true;
    value_begin_ = pos_;
    if (key_ == "parameters") element_.args_begin = pos_;
    if (c == '"') in_string_ = true;
    if (c == '{' || c == '[') ++depth_;
    return;
  }
  if (depth_ > 1) {
    if (c == '"') in_string_ = true;
    if (c == '{' || c == '[') ++depth_;
    if ((c == '}' || c == ']') && --depth_ == 1) value_closed(pos_ + 1);
    return;
  }
  if (c == ',' || c == '}' || is_space(c)) {
    value_closed(pos_);
    if (c == ',') at_ = At::kKey;
    if (c == '}') element_closed(events);
  }
}

// One byte of the "required" array at pos_ (the caller advances pos_).
void ForcedCalls::scan_byte(std::vector<ParseEvent>& events) {
  const char c = text_[pos_];
  if (in_string_) return scan_string_byte(c);
  switch (at_) {
    case At::kArrayStart:
      if (c == '[') at_ = At::kElementStart;
      else if (!is_space(c)) at_ = At::kDone;  // not the forced JSON (never under its grammar)
      return;
    case At::kElementStart:
      if (c == ']') at_ = At::kDone;
      if (c == '{') {
        depth_ = 1;
        at_ = At::kKey;
      }
      return;
    case At::kKey:
      if (c == '"') {
        in_string_ = true;
        key_.clear();
      }
      if (c == '}') element_closed(events);
      return;
    case At::kColon:
      if (c == ':') at_ = At::kValue;
      return;
    case At::kValue: return scan_value_byte(c, events);
    case At::kAfterValue:
      if (c == ',') at_ = At::kKey;
      if (c == '}') element_closed(events);
      return;
    case At::kDone: return;
  }
}

void ForcedCalls::scan(std::vector<ParseEvent>& events) {
  for (; pos_ < text_.size() && at_ != At::kDone; ++pos_) scan_byte(events);
  if (!stream_ || element_.args_begin == std::string::npos || !element_.name) return;
  if (!open_) begin_call(*element_.name, events);
  stream_args(element_.args_begin, element_.args_end != std::string::npos ? element_.args_end : text_.size(),
              events);
}

void ForcedCalls::feed(std::string_view json_text, std::vector<ParseEvent>& events) {
  text_ += json_text;
  if (!named_) {
    scan(events);
    return;
  }
  const size_t begin = first_non_space(text_);
  if (!stream_ || begin == text_.size()) return;
  if (!open_) begin_call(*named_, events);
  stream_args(begin, text_.size(), events);
}

void ForcedCalls::finish(ParsedMessage& m, std::vector<ParseEvent>& events) {
  const std::string_view json = trim_end(std::string_view(text_).substr(first_non_space(text_)));
  bool not_json = false;
  if (named_) {
    const nlohmann::json v = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
    if (v.is_object()) {
      if (!open_) begin_call(*named_, events);
      end_call(json, events);
    } else if (open_) {
      end_call(std::nullopt, events);
    }
    not_json = !json.empty() && json.front() != '{';
  } else {
    if (open_) {
      if (stream_) end_call(std::nullopt, events);
      open_.reset();
    }
    not_json = !json.empty() && json.front() != '[';
  }
  // Only text that is not the forced JSON at all (which its grammar never
  // lets through) is content; a cut-off call never is.
  if (not_json) {
    m.content = std::string(json);
    events.push_back(ContentDelta{m.content});
  }
  m.tool_calls = std::move(calls_);
  m.ended_with_tool_call = !m.tool_calls.empty();
}

}  // namespace met
