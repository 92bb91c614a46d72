// JSON in and out. Tested by tests/chat/json_convert_test.cc.
#include "chat/jinja/json_convert.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "chat/jinja/errors.h"
#include "chat/jinja/utf8.h"
#include "chat/jinja/value_format.h"

namespace met::jinja {
namespace {

using Json = nlohmann::ordered_json;

Result<Value> from_json_at(Heap& heap, const Json& j, int depth);

Result<Value> array_from_json(Heap& heap, const Json& j, int depth) {
  std::vector<Value> items;
  items.reserve(j.size());
  for (const Json& item : j) {
    MET_ASSIGN_OR_RETURN(Value v, from_json_at(heap, item, depth + 1));
    items.push_back(v);
  }
  return heap.list(std::move(items));
}

Result<Value> object_from_json(Heap& heap, const Json& j, int depth) {
  MET_ASSIGN_OR_RETURN(DictObj * d, heap.dict());
  for (const auto& [key, item] : j.items()) {
    MET_ASSIGN_OR_RETURN(Value k, heap.string(std::string_view(key)));
    MET_ASSIGN_OR_RETURN(Value v, from_json_at(heap, item, depth + 1));
    MET_RETURN_IF_ERROR(heap.set_item(*d, k, v));
  }
  return Value::dict(d);
}

Result<Value> from_json_at(Heap& heap, const Json& j, int depth) {
  if (depth > kMaxValueDepth) {
    return invalid_argument("context JSON is nested deeper than {} levels", kMaxValueDepth);
  }
  switch (j.type()) {
    case Json::value_t::null:
    case Json::value_t::discarded:
      return Value::none();
    case Json::value_t::boolean:
      return Value::boolean(j.get<bool>());
    case Json::value_t::number_integer:
      return Value::integer(j.get<int64_t>());
    case Json::value_t::number_unsigned: {
      const auto u = j.get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return Value::floating(static_cast<double>(u));
      }
      return Value::integer(static_cast<int64_t>(u));
    }
    case Json::value_t::number_float:
      return Value::floating(j.get<double>());
    case Json::value_t::string:
      return heap.string(std::string_view(j.get_ref<const std::string&>()));
    case Json::value_t::array:
      return array_from_json(heap, j, depth);
    case Json::value_t::object:
      return object_from_json(heap, j, depth);
    case Json::value_t::binary:
      return invalid_argument("context JSON holds binary data, which a template cannot use");
  }
  return Value::none();
}

Status append_at(const Value& v, const JsonStyle& style, std::string& out, size_t max_bytes, int depth);

void append_newline_indent(const JsonStyle& style, int level, std::string& out) {
  out += '\n';
  for (int i = 0; i < level; ++i) out += *style.indent;
}

void append_json_float(double d, std::string& out) {
  if (std::isnan(d)) {
    out += "NaN";
  } else if (std::isinf(d)) {
    out += d < 0 ? "-Infinity" : "Infinity";
  } else {
    append_float_repr(d, out);
  }
}

// json.dumps' conversion of a dict key to a string.
Result<std::string> key_string(const Value& key) {
  std::string s;
  switch (key.kind()) {
    case ValueKind::kString: return key.as_string();
    case ValueKind::kInt: return fmt::format("{}", key.as_int());
    case ValueKind::kBool: return std::string(key.as_bool() ? "true" : "false");
    case ValueKind::kNone: return std::string("null");
    case ValueKind::kFloat:
      append_json_float(key.as_float(), s);
      return s;
    case ValueKind::kUndefined:
    case ValueKind::kList:
    case ValueKind::kTuple:
    case ValueKind::kDict:
    case ValueKind::kNamespace:
    case ValueKind::kFunction:
    case ValueKind::kLoop:
      break;
  }
  return type_error("keys must be str, int, float, bool or None, not {}", type_name(key));
}

Result<std::vector<const std::pair<Value, Value>*>> ordered_entries(const DictObj& d, bool sort) {
  std::vector<const std::pair<Value, Value>*> entries;
  for (const auto& e : d.entries) entries.push_back(&e);
  if (!sort || entries.size() < 2) return entries;
  const bool all_strings = std::all_of(entries.begin(), entries.end(),
                                       [](auto* e) { return e->first.is_string(); });
  const bool all_numbers = std::all_of(entries.begin(), entries.end(),
                                       [](auto* e) { return e->first.is_number(); });
  if (!all_strings && !all_numbers) {
    return type_error("'<' not supported between dict keys of different types");
  }
  std::stable_sort(entries.begin(), entries.end(), [&](auto* a, auto* b) {
    if (all_strings) return a->first.as_string() < b->first.as_string();
    return a->first.as_float() < b->first.as_float();
  });
  return entries;
}

Status append_object(const DictObj& d, const JsonStyle& style, std::string& out, size_t max_bytes, int depth) {
  if (d.entries.empty()) {
    out += "{}";
    return ok_status();
  }
  MET_ASSIGN_OR_RETURN(auto entries, ordered_entries(d, style.sort_keys));
  out += '{';
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i > 0) out += style.item_separator;
    if (style.indent) append_newline_indent(style, depth + 1, out);
    MET_ASSIGN_OR_RETURN(std::string key, key_string(entries[i]->first));
    append_json_string(key, style.ensure_ascii, out);
    out += style.key_separator;
    MET_RETURN_IF_ERROR(append_at(entries[i]->second, style, out, max_bytes, depth + 1));
  }
  if (style.indent) append_newline_indent(style, depth, out);
  out += '}';
  return ok_status();
}

Status append_array(const ListObj& l, const JsonStyle& style, std::string& out, size_t max_bytes, int depth) {
  if (l.items.empty()) {
    out += "[]";
    return ok_status();
  }
  out += '[';
  for (size_t i = 0; i < l.items.size(); ++i) {
    if (i > 0) out += style.item_separator;
    if (style.indent) append_newline_indent(style, depth + 1, out);
    MET_RETURN_IF_ERROR(append_at(l.items[i], style, out, max_bytes, depth + 1));
  }
  if (style.indent) append_newline_indent(style, depth, out);
  out += ']';
  return ok_status();
}

Status append_at(const Value& v, const JsonStyle& style, std::string& out, size_t max_bytes, int depth) {
  if (out.size() > max_bytes) return limit_error("tojson needs more than {} bytes", max_bytes);
  if (depth > kMaxValueDepth) {
    return value_error("a value is nested deeper than {} levels (or contains itself)", kMaxValueDepth);
  }
  switch (v.kind()) {
    case ValueKind::kNone: out += "null"; return ok_status();
    case ValueKind::kBool: out += v.as_bool() ? "true" : "false"; return ok_status();
    case ValueKind::kInt: out += fmt::format("{}", v.as_int()); return ok_status();
    case ValueKind::kFloat: append_json_float(v.as_float(), out); return ok_status();
    case ValueKind::kString:
      append_json_string(v.as_string(), style.ensure_ascii, out);
      return ok_status();
    case ValueKind::kList:
    case ValueKind::kTuple:
      return append_array(v.as_list(), style, out, max_bytes, depth);
    case ValueKind::kDict:
      return append_object(v.as_dict(), style, out, max_bytes, depth);
    case ValueKind::kUndefined:
    case ValueKind::kNamespace:
    case ValueKind::kFunction:
    case ValueKind::kLoop:
      break;
  }
  return type_error("Object of type {} is not JSON serializable", type_name(v));
}

void append_unicode_escape(char32_t c, std::string& out) {
  if (c >= 0x10000) {
    const char32_t v = c - 0x10000;
    out += fmt::format("\\u{:04x}\\u{:04x}", static_cast<uint32_t>(0xD800 | (v >> 10)),
                       static_cast<uint32_t>(0xDC00 | (v & 0x3FF)));
  } else {
    out += fmt::format("\\u{:04x}", static_cast<uint32_t>(c));
  }
}

}  // namespace

Result<Value> value_from_json(Heap& heap, const nlohmann::ordered_json& json) {
  return from_json_at(heap, json, 0);
}

Status append_json(const Value& v, const JsonStyle& style, std::string& out, size_t max_bytes) {
  MET_RETURN_IF_ERROR(append_at(v, style, out, max_bytes, 0));
  if (out.size() > max_bytes) return limit_error("tojson needs more than {} bytes", max_bytes);
  return ok_status();
}

void append_json_string(std::string_view s, bool ensure_ascii, std::string& out) {
  out += '"';
  for (size_t pos = 0; pos < s.size();) {
    const size_t start = pos;
    const char32_t c = decode_utf8(s, pos);
    switch (c) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      case '\b': out += "\\b"; continue;
      case '\f': out += "\\f"; continue;
      default: break;
    }
    if (c < 0x20 || (ensure_ascii && c >= 0x7F)) {
      append_unicode_escape(c, out);
    } else {
      out.append(s.substr(start, pos - start));
    }
  }
  out += '"';
}

}  // namespace met::jinja
