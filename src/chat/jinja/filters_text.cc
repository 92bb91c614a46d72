// Text filters. Tested by tests/chat/filters_text_test.cc.
#include <array>

#include "chat/jinja/errors.h"
#include "chat/jinja/filters.h"
#include "chat/jinja/str_ops.h"
#include "chat/jinja/utf8.h"
#include "chat/jinja/value_format.h"
#include "chat/jinja/named_table.h"

namespace met::jinja {
namespace {

Result<std::string> str_of(Runtime& rt, const Value& v) {
  if (v.is_string()) return v.as_string();
  std::string out;
  MET_RETURN_IF_ERROR(append_str(v, out, rt.string_room()));
  return out;
}

Result<Value> filter_trim(Runtime& rt, const Value& input, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("trim", args, {"chars"}));
  MET_ASSIGN_OR_RETURN(std::string s, str_of(rt, input));
  std::optional<std::string_view> chars;
  if (a.has(0) && !a.get(0).is_none()) {
    MET_ASSIGN_OR_RETURN(std::string_view c, a.get_string(0, ""));
    chars = c;
  }
  return rt.heap().string(py_strip(s, chars, StripSide::kBoth));
}

template <std::string (*F)(std::string_view)>
Result<Value> filter_transform(Runtime& rt, const Value& input, const CallArgs& args) {
  MET_RETURN_IF_ERROR(BoundArgs::bind("filter", args, {}).status());  // takes no arguments
  MET_ASSIGN_OR_RETURN(std::string s, str_of(rt, input));
  return rt.heap().string(F(s));
}

Result<Value> filter_replace(Runtime& rt, const Value& input, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("replace", args, {"old", "new", "count"}));
  MET_ASSIGN_OR_RETURN(std::string s, str_of(rt, input));
  MET_ASSIGN_OR_RETURN(std::string old, str_of(rt, a.get(0)));
  MET_ASSIGN_OR_RETURN(std::string rep, str_of(rt, a.get(1)));
  MET_ASSIGN_OR_RETURN(int64_t count, a.get_int(2, -1));
  if (replaced_size(s, old, rep, count) > rt.string_room()) {
    return limit_error("replace needs more than {} bytes", rt.string_room());
  }
  return rt.heap().string(py_replace(s, old, rep, count));
}

Result<std::string> indent_unit(Runtime& rt, const Value& width) {
  if (width.is_string()) return width.as_string();
  if (!width.is_integral()) return type_error("indent width must be an int or a string, not {}", type_name(width));
  const int64_t n = std::max<int64_t>(width.as_int(), 0);
  if (static_cast<uint64_t>(n) > rt.string_room()) return limit_error("indent width {} is too large", n);
  return std::string(static_cast<size_t>(n), ' ');
}

// Jinja's |indent(width=4, first=False, blank=False).
Result<Value> filter_indent(Runtime& rt, const Value& input, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("indent", args, {"width", "first", "blank"}));
  MET_ASSIGN_OR_RETURN(std::string unit, indent_unit(rt, a.get_or(0, Value::integer(4))));
  MET_ASSIGN_OR_RETURN(std::string s, str_of(rt, input));
  s += '\n';  // Jinja's own quirk: splitlines then keeps a last empty line
  const std::vector<std::string_view> lines = py_splitlines(s, false);
  if (lines.size() * unit.size() > rt.string_room()) return limit_error("indent needs too many bytes");
  const bool blank = a.get_flag(2, false);
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) {
      out += '\n';
      if (blank || !lines[i].empty()) out += unit;
    }
    out += lines[i];
  }
  if (a.get_flag(1, false)) out = unit + out;
  return rt.heap().string(std::move(out));
}

Result<Value> filter_center(Runtime& rt, const Value& input, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("center", args, {"width"}));
  MET_ASSIGN_OR_RETURN(int64_t width, a.get_int(0, 80));
  MET_ASSIGN_OR_RETURN(std::string s, str_of(rt, input));
  const auto len = static_cast<int64_t>(utf8_length(s));
  if (width <= len) return rt.heap().string(std::move(s));
  const auto pad = static_cast<size_t>(width - len);
  if (pad > rt.string_room()) return limit_error("center width {} is too large", width);
  const size_t left = pad / 2 + (pad & static_cast<size_t>(width) & 1);
  return rt.heap().string(std::string(left, ' ') + s + std::string(pad - left, ' '));
}

Result<Value> filter_wordcount(Runtime& rt, const Value& input, const CallArgs&) {
  MET_ASSIGN_OR_RETURN(std::string s, str_of(rt, input));
  return Value::integer(word_count(s));
}

Result<Value> filter_escape(Runtime& rt, const Value& input, const CallArgs&) {
  if (input.is_markup()) return input;
  MET_ASSIGN_OR_RETURN(std::string s, str_of(rt, input));
  return escape_markup(rt, s);
}

Result<Value> filter_forceescape(Runtime& rt, const Value& input, const CallArgs&) {
  MET_ASSIGN_OR_RETURN(std::string s, str_of(rt, input));
  return escape_markup(rt, s);
}

Result<Value> filter_safe(Runtime& rt, const Value& input, const CallArgs&) {
  if (input.is_markup()) return input;
  MET_ASSIGN_OR_RETURN(Value s, to_string_value(rt, input));
  return Value::markup(&s.as_string());
}

Result<Value> filter_string(Runtime& rt, const Value& input, const CallArgs&) {
  return to_string_value(rt, input);
}

constexpr NamedFn<FilterFn> kTextFilters[] = {
    {"trim", filter_trim},
    {"lower", filter_transform<to_lower>},
    {"upper", filter_transform<to_upper>},
    {"title", filter_transform<jinja_title>},
    {"capitalize", filter_transform<py_capitalize>},
    {"replace", filter_replace},
    {"indent", filter_indent},
    {"center", filter_center},
    {"wordcount", filter_wordcount},
    {"escape", filter_escape},
    {"e", filter_escape},
    {"forceescape", filter_forceescape},
    {"safe", filter_safe},
    {"string", filter_string},
};

}  // namespace

Result<Value> escape_markup(Runtime& rt, std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  if (out.size() > rt.string_room()) return limit_error("escape needs more than {} bytes", rt.string_room());
  MET_ASSIGN_OR_RETURN(Value v, rt.heap().string(std::move(out)));
  return Value::markup(&v.as_string());
}

Result<Value> to_string_value(Runtime& rt, const Value& v) {
  if (v.is_string()) return v;
  MET_ASSIGN_OR_RETURN(std::string s, str_of(rt, v));
  return rt.heap().string(std::move(s));
}

FilterFn find_text_filter(std::string_view name) {
  return find_named(kTextFilters, name);
}

FilterFn find_filter(std::string_view name) {
  if (FilterFn f = find_text_filter(name)) return f;
  if (FilterFn f = find_sequence_filter(name)) return f;
  return find_convert_filter(name);
}

}  // namespace met::jinja
