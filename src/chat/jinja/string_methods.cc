// Methods of str. Tested by tests/chat/methods_test.cc.
#include <algorithm>
#include <array>
#include <utility>

#include "chat/jinja/access.h"
#include "chat/jinja/errors.h"
#include "chat/jinja/methods.h"
#include "chat/jinja/runtime.h"
#include "chat/jinja/str_ops.h"
#include "chat/jinja/utf8.h"
#include "chat/jinja/named_table.h"

namespace met::jinja {
namespace {

Result<std::optional<std::string_view>> optional_string(const BoundArgs& a, size_t i, std::string_view fn) {
  const Value v = a.get(i);
  if (!a.has(i) || v.is_none()) return std::optional<std::string_view>();
  if (!v.is_string()) return type_error("{}() argument must be str or None, not {}", fn, type_name(v));
  return std::optional<std::string_view>(v.as_string());
}

// s[start:end] by code points, and the code-point index where it begins.
Result<std::pair<std::string_view, int64_t>> window(std::string_view s, const BoundArgs& a, size_t start_i) {
  if (!a.has(start_i) && !a.has(start_i + 1)) return std::make_pair(s, int64_t{0});
  const std::vector<size_t> offsets = utf8_offsets(s);
  const auto n = static_cast<int64_t>(offsets.size() - 1);
  auto clamp = [n](int64_t i) { return i < 0 ? std::max<int64_t>(i + n, 0) : std::min(i, n); };
  MET_ASSIGN_OR_RETURN(int64_t start, a.get_int(start_i, 0));
  MET_ASSIGN_OR_RETURN(int64_t end, a.get_int(start_i + 1, n));
  start = clamp(start);
  end = std::max(clamp(end), start);
  const size_t b = offsets[static_cast<size_t>(start)];
  return std::make_pair(s.substr(b, offsets[static_cast<size_t>(end)] - b), start);
}

Result<Value> affix_match(const Value& self, const CallArgs& args, bool prefix) {
  const std::string_view fn = prefix ? "startswith" : "endswith";
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind(fn, args, {"prefix", "start", "end"}));
  MET_ASSIGN_OR_RETURN(auto w, window(self.as_string(), a, 1));
  const Value p = a.get(0);
  std::vector<Value> candidates;
  if (p.is_string()) candidates.push_back(p);
  else if (p.kind() == ValueKind::kTuple) candidates = p.as_list().items;
  else return type_error("{} first arg must be str or a tuple of str, not {}", fn, type_name(p));
  for (const Value& c : candidates) {
    if (!c.is_string()) return type_error("tuple for {} must only contain str, not {}", fn, type_name(c));
    if (prefix ? w.first.starts_with(c.as_string()) : w.first.ends_with(c.as_string())) {
      return Value::boolean(true);
    }
  }
  return Value::boolean(false);
}

Result<Value> str_startswith(Runtime&, const Value& self, const CallArgs& args) {
  return affix_match(self, args, true);
}
Result<Value> str_endswith(Runtime&, const Value& self, const CallArgs& args) {
  return affix_match(self, args, false);
}

Result<Value> strip_side(Runtime& rt, const Value& self, const CallArgs& args, StripSide side) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("strip", args, {"chars"}));
  MET_ASSIGN_OR_RETURN(auto chars, optional_string(a, 0, "strip"));
  return rt.heap().string(py_strip(self.as_string(), chars, side));
}
Result<Value> str_strip(Runtime& rt, const Value& self, const CallArgs& args) {
  return strip_side(rt, self, args, StripSide::kBoth);
}
Result<Value> str_lstrip(Runtime& rt, const Value& self, const CallArgs& args) {
  return strip_side(rt, self, args, StripSide::kLeft);
}
Result<Value> str_rstrip(Runtime& rt, const Value& self, const CallArgs& args) {
  return strip_side(rt, self, args, StripSide::kRight);
}

Result<Value> split_impl(Runtime& rt, const Value& self, const CallArgs& args, bool from_right) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("split", args, {"sep", "maxsplit"}));
  MET_ASSIGN_OR_RETURN(auto sep, optional_string(a, 0, "split"));
  MET_ASSIGN_OR_RETURN(int64_t max_split, a.get_int(1, -1));
  if (sep && sep->empty()) return value_error("empty separator");
  MET_RETURN_IF_ERROR(rt.spend(self.as_string().size() / 16 + 1));
  const auto parts = from_right ? py_rsplit(self.as_string(), sep, max_split)
                                : py_split(self.as_string(), sep, max_split);
  return make_string_list(rt, parts);
}
Result<Value> str_split(Runtime& rt, const Value& self, const CallArgs& args) {
  return split_impl(rt, self, args, false);
}
Result<Value> str_rsplit(Runtime& rt, const Value& self, const CallArgs& args) {
  return split_impl(rt, self, args, true);
}

Result<Value> str_splitlines(Runtime& rt, const Value& self, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("splitlines", args, {"keepends"}));
  return make_string_list(rt, py_splitlines(self.as_string(), a.get_flag(0, false)));
}

template <std::string (*F)(std::string_view)>
Result<Value> str_transform(Runtime& rt, const Value& self, const CallArgs& args) {
  MET_RETURN_IF_ERROR(BoundArgs::bind("str method", args, {}).status());  // takes no arguments
  return rt.heap().string(F(self.as_string()));
}

Result<Value> str_replace(Runtime& rt, const Value& self, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("replace", args, {"old", "new", "count"}));
  if (!a.get(0).is_string() || !a.get(1).is_string()) {
    return type_error("replace() arguments must be str, not {} and {}", type_name(a.get(0)),
                      type_name(a.get(1)));
  }
  MET_ASSIGN_OR_RETURN(int64_t count, a.get_int(2, -1));
  const std::string& s = self.as_string();
  const std::string& old = a.get(0).as_string();
  const std::string& rep = a.get(1).as_string();
  if (replaced_size(s, old, rep, count) > rt.string_room()) {
    return limit_error("replace() needs more than {} bytes", rt.string_room());
  }
  return rt.heap().string(py_replace(s, old, rep, count));
}

Result<Value> find_impl(const Value& self, const CallArgs& args, bool from_right, bool raise) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("find", args, {"sub", "start", "end"}));
  if (!a.get(0).is_string()) return type_error("must be str, not {}", type_name(a.get(0)));
  MET_ASSIGN_OR_RETURN(auto w, window(self.as_string(), a, 1));
  const int64_t i = py_find(w.first, a.get(0).as_string(), from_right);
  if (i < 0 && raise) return value_error("substring not found");
  return Value::integer(i < 0 ? -1 : i + w.second);
}
Result<Value> str_find(Runtime&, const Value& self, const CallArgs& args) {
  return find_impl(self, args, false, false);
}
Result<Value> str_rfind(Runtime&, const Value& self, const CallArgs& args) {
  return find_impl(self, args, true, false);
}
Result<Value> str_index(Runtime&, const Value& self, const CallArgs& args) {
  return find_impl(self, args, false, true);
}
Result<Value> str_rindex(Runtime&, const Value& self, const CallArgs& args) {
  return find_impl(self, args, true, true);
}

Result<Value> str_count(Runtime&, const Value& self, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("count", args, {"sub", "start", "end"}));
  if (!a.get(0).is_string()) return type_error("must be str, not {}", type_name(a.get(0)));
  MET_ASSIGN_OR_RETURN(auto w, window(self.as_string(), a, 1));
  return Value::integer(py_count(w.first, a.get(0).as_string()));
}

Result<Value> str_join(Runtime& rt, const Value& self, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("join", args, {"iterable"}));
  MET_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(rt, a.get(0)));
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!items[i].is_string()) {
      return type_error("sequence item {}: expected str instance, {} found", i, type_name(items[i]));
    }
    if (i > 0) out += self.as_string();
    out += items[i].as_string();
    if (out.size() > rt.string_room()) return limit_error("join() needs more than {} bytes", rt.string_room());
  }
  return rt.heap().string(std::move(out));
}

template <bool (*Pred)(char32_t)>
Result<Value> str_is_all(Runtime&, const Value& self, const CallArgs&) {
  const std::string& s = self.as_string();
  if (s.empty()) return Value::boolean(false);
  for (size_t pos = 0; pos < s.size();) {
    if (!Pred(decode_utf8(s, pos))) return Value::boolean(false);
  }
  return Value::boolean(true);
}

bool is_alnum(char32_t c) { return is_alpha(c) || is_digit(c); }

// islower()/isupper(): some cased character, and none of the other case.
template <bool kUpper>
Result<Value> str_is_case(Runtime&, const Value& self, const CallArgs&) {
  bool any_cased = false;
  const std::string& s = self.as_string();
  for (size_t pos = 0; pos < s.size();) {
    const char32_t c = decode_utf8(s, pos);
    if (kUpper ? is_lower(c) : is_upper(c)) return Value::boolean(false);
    any_cased = any_cased || is_cased(c);
  }
  return Value::boolean(any_cased);
}

Result<Value> partition_impl(Runtime& rt, const Value& self, const CallArgs& args, bool from_right) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("partition", args, {"sep"}));
  if (!a.get(0).is_string()) return type_error("must be str, not {}", type_name(a.get(0)));
  const std::string_view s = self.as_string();
  const std::string& sep = a.get(0).as_string();
  if (sep.empty()) return value_error("empty separator");
  const size_t at = from_right ? s.rfind(sep) : s.find(sep);
  std::vector<std::string_view> parts;
  if (at == std::string_view::npos) {
    parts = from_right ? std::vector<std::string_view>{"", "", s} : std::vector<std::string_view>{s, "", ""};
  } else {
    parts = {s.substr(0, at), sep, s.substr(at + sep.size())};
  }
  MET_ASSIGN_OR_RETURN(Value list, make_string_list(rt, parts));
  return rt.heap().tuple(list.as_list().items);
}
Result<Value> str_partition(Runtime& rt, const Value& self, const CallArgs& args) {
  return partition_impl(rt, self, args, false);
}
Result<Value> str_rpartition(Runtime& rt, const Value& self, const CallArgs& args) {
  return partition_impl(rt, self, args, true);
}

// ljust / rjust / center.
template <int kAlign>
Result<Value> str_pad(Runtime& rt, const Value& self, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("ljust", args, {"width", "fillchar"}));
  MET_ASSIGN_OR_RETURN(int64_t width, a.get_int(0, 0));
  MET_ASSIGN_OR_RETURN(std::string_view fill, a.get_string(1, " "));
  if (utf8_length(fill) != 1) return type_error("The fill character must be exactly one character long");
  const auto len = static_cast<int64_t>(utf8_length(self.as_string()));
  if (width <= len) return self;
  const auto pad = static_cast<size_t>(width - len);
  if (pad > rt.string_room() / fill.size()) return limit_error("padding needs more than {} bytes", rt.string_room());
  size_t left = kAlign < 0 ? 0 : kAlign > 0 ? pad : pad / 2 + (pad & static_cast<size_t>(width) & 1);
  std::string out;
  for (size_t i = 0; i < left; ++i) out += fill;
  out += self.as_string();
  for (size_t i = left; i < pad; ++i) out += fill;
  return rt.heap().string(std::move(out));
}

constexpr NamedFn<BuiltinFn> kStringMethods[] = {
    {"startswith", str_startswith}, {"endswith", str_endswith},
    {"strip", str_strip}, {"lstrip", str_lstrip}, {"rstrip", str_rstrip},
    {"split", str_split}, {"rsplit", str_rsplit}, {"splitlines", str_splitlines},
    {"upper", str_transform<to_upper>}, {"lower", str_transform<to_lower>},
    {"title", str_transform<py_title>}, {"capitalize", str_transform<py_capitalize>},
    {"replace", str_replace}, {"find", str_find}, {"rfind", str_rfind},
    {"index", str_index}, {"rindex", str_rindex}, {"count", str_count},
    {"join", str_join}, {"isdigit", str_is_all<is_digit>},
    {"isalpha", str_is_all<is_alpha>}, {"isalnum", str_is_all<is_alnum>},
    {"isspace", str_is_all<is_space>}, {"islower", str_is_case<false>},
    {"isupper", str_is_case<true>}, {"partition", str_partition},
    {"rpartition", str_rpartition}, {"ljust", str_pad<-1>}, {"rjust", str_pad<1>},
    {"center", str_pad<0>},
};

}  // namespace

Result<Value> make_string_list(Runtime& rt, const std::vector<std::string_view>& parts) {
  std::vector<Value> items;
  items.reserve(parts.size());
  for (std::string_view p : parts) {
    MET_ASSIGN_OR_RETURN(Value v, rt.heap().string(p));
    items.push_back(v);
  }
  return rt.heap().list(std::move(items));
}

BuiltinFn find_string_method(std::string_view name) {
  return find_named(kStringMethods, name);
}

BuiltinFn find_method(ValueKind receiver, std::string_view name) {
  switch (receiver) {
    case ValueKind::kString: return find_string_method(name);
    case ValueKind::kList: return find_list_method(name, false);
    case ValueKind::kTuple: return find_list_method(name, true);
    case ValueKind::kDict: return find_dict_method(name);
    case ValueKind::kUndefined:
    case ValueKind::kNone:
    case ValueKind::kBool:
    case ValueKind::kInt:
    case ValueKind::kFloat:
    case ValueKind::kNamespace:
    case ValueKind::kFunction:
    case ValueKind::kLoop:
      return nullptr;
  }
  return nullptr;
}

}  // namespace met::jinja
