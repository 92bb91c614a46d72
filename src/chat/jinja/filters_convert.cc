// Conversion filters. Tested by tests/chat/filters_convert_test.cc.
#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "chat/jinja/access.h"
#include "chat/jinja/errors.h"
#include "chat/jinja/filters.h"
#include "chat/jinja/json_convert.h"
#include "chat/jinja/methods.h"
#include "chat/jinja/str_ops.h"
#include "chat/jinja/named_table.h"

namespace met::jinja {
namespace {

Result<std::optional<std::string>> json_indent(Runtime& rt, const Value& indent) {
  if (indent.is_none() || indent.is_undefined()) return std::optional<std::string>();
  if (indent.is_string()) return std::optional<std::string>(indent.as_string());
  if (!indent.is_integral()) return type_error("tojson indent must be an int or a string, not {}", type_name(indent));
  const int64_t n = std::max<int64_t>(indent.as_int(), 0);
  if (static_cast<uint64_t>(n) > rt.string_room() / 1024) return limit_error("tojson indent {} is too large", n);
  return std::optional<std::string>(std::string(static_cast<size_t>(n), ' '));
}

Status apply_separators(const Value& separators, JsonStyle& style) {
  if (separators.is_none() || separators.is_undefined()) return ok_status();
  if (!separators.is_sequence_object() || separators.as_list().items.size() != 2 ||
      !separators.as_list().items[0].is_string() || !separators.as_list().items[1].is_string()) {
    return type_error("tojson separators must be a pair of strings");
  }
  style.item_separator = separators.as_list().items[0].as_string();
  style.key_separator = separators.as_list().items[1].as_string();
  return ok_status();
}

// Hugging Face's tojson: json.dumps(x, ensure_ascii=False, indent=None,
// separators=None, sort_keys=False).
Result<Value> filter_tojson(Runtime& rt, const Value& input, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("tojson", args,
                                                    {"ensure_ascii", "indent", "separators", "sort_keys"}));
  JsonStyle style;
  style.ensure_ascii = a.get_flag(0, false);
  MET_ASSIGN_OR_RETURN(style.indent, json_indent(rt, a.get(1)));
  if (style.indent) style.item_separator.erase(1);  // ", " becomes "," as in json.dumps
  MET_RETURN_IF_ERROR(apply_separators(a.get(2), style));
  style.sort_keys = a.get_flag(3, false);
  std::string out;
  MET_RETURN_IF_ERROR(append_json(input, style, out, rt.string_room()));
  return rt.heap().string(std::move(out));
}

// Python's float(str): whitespace around, underscores between digits,
// inf/infinity/nan in any case.
std::optional<double> parse_python_float(std::string_view text) {
  const std::string_view s = py_strip(text, std::nullopt, StripSide::kBoth);
  if (s.empty()) return std::nullopt;
  std::string clean;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '_') {
      if (i == 0 || i + 1 == s.size() || !isdigit(static_cast<unsigned char>(s[i - 1])) ||
          !isdigit(static_cast<unsigned char>(s[i + 1]))) {
        return std::nullopt;
      }
      continue;
    }
    if (c == 'x' || c == 'X' || c == 'p' || c == 'P') return std::nullopt;  // no hex floats
    clean += c;
  }
  char* end = nullptr;
  const double d = std::strtod(clean.c_str(), &end);
  if (end != clean.c_str() + clean.size()) return std::nullopt;
  return d;
}

int digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'z') return c - 'a' + 10;
  if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
  return 99;
}

// Python's int(str, base) for bases 2..36 (and 0: by prefix), within 64 bits.
std::optional<int64_t> parse_python_int(std::string_view text, int64_t base) {
  std::string_view s = py_strip(text, std::nullopt, StripSide::kBoth);
  const bool negative = !s.empty() && s[0] == '-';
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  if (s.size() > 2 && s[0] == '0') {
    const char p = static_cast<char>(s[1] | 0x20);
    const int64_t prefixed = p == 'x' ? 16 : p == 'o' ? 8 : p == 'b' ? 2 : 0;
    if (prefixed != 0 && (base == 0 || base == prefixed)) {
      base = prefixed;
      s.remove_prefix(2);
    }
  }
  if (base == 0) base = 10;
  if (base < 2 || base > 36 || s.empty() || s.front() == '_' || s.back() == '_') return std::nullopt;
  int64_t v = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '_' && s[i - 1] != '_') continue;
    const int d = digit_value(s[i]);
    if (d >= base) return std::nullopt;
    if (__builtin_mul_overflow(v, base, &v) || __builtin_add_overflow(v, d, &v)) return std::nullopt;
  }
  return negative ? -v : v;
}

std::optional<int64_t> truncate_double(double d) {
  if (!std::isfinite(d) || d >= 9.2e18 || d <= -9.2e18) return std::nullopt;
  return static_cast<int64_t>(d);
}

Result<Value> filter_int(Runtime&, const Value& input, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("int", args, {"default", "base"}));
  MET_ASSIGN_OR_RETURN(int64_t base, a.get_int(1, 10));
  const Value fallback = a.get_or(0, Value::integer(0));
  std::optional<int64_t> v;
  if (input.is_integral()) {
    v = input.as_int();
  } else if (input.kind() == ValueKind::kFloat) {
    v = truncate_double(input.as_float());
  } else if (input.is_string()) {
    v = parse_python_int(input.as_string(), base);
    if (!v) {
      if (auto d = parse_python_float(input.as_string())) v = truncate_double(*d);
    }
  }
  return v ? Value::integer(*v) : fallback;
}

Result<Value> filter_float(Runtime&, const Value& input, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("float", args, {"default"}));
  if (input.is_number()) return Value::floating(input.as_float());
  if (input.is_string()) {
    if (auto d = parse_python_float(input.as_string())) return Value::floating(*d);
  }
  return a.get_or(0, Value::floating(0.0));
}

Result<Value> filter_abs(Runtime&, const Value& input, const CallArgs&) {
  if (input.kind() == ValueKind::kFloat) return Value::floating(std::fabs(input.as_float()));
  if (input.is_integral()) {
    if (input.as_int() == std::numeric_limits<int64_t>::min()) {
      return invalid_argument("OverflowError: integer result does not fit 64 bits");
    }
    return Value::integer(std::llabs(input.as_int()));
  }
  if (input.is_undefined()) return undefined_error(input);
  return type_error("bad operand type for abs(): '{}'", type_name(input));
}

// Python's round(x, n) for a float: ties to even on the exact binary value.
double round_half_even(double x, int64_t digits) {
  if (!std::isfinite(x)) return x;
  if (digits == 0) return std::nearbyint(x);
  if (digits > 0) {
    const std::string s = fmt::format("{:.{}f}", x, static_cast<int>(std::min<int64_t>(digits, 340)));
    return std::strtod(s.c_str(), nullptr);
  }
  const double scale = std::pow(10.0, -static_cast<double>(digits));
  if (!std::isfinite(scale)) return std::copysign(0.0, x);
  return std::nearbyint(x / scale) * scale;
}

Result<Value> filter_round(Runtime&, const Value& input, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("round", args, {"precision", "method"}));
  MET_ASSIGN_OR_RETURN(int64_t precision, a.get_int(0, 0));
  MET_ASSIGN_OR_RETURN(std::string_view method, a.get_string(1, "common"));
  if (method != "common" && method != "ceil" && method != "floor") {
    return invalid_argument("FilterArgumentError: method must be common, ceil or floor");
  }
  if (!input.is_number()) {
    if (input.is_undefined()) return undefined_error(input);
    return type_error("type {} doesn't define __round__ method", type_name(input));
  }
  if (method == "common") {
    if (input.is_integral() && precision >= 0) return Value::integer(input.as_int());
    return Value::floating(round_half_even(input.as_float(), precision));
  }
  const double scale = std::pow(10.0, static_cast<double>(precision));
  const double scaled = input.as_float() * scale;
  return Value::floating((method == "ceil" ? std::ceil(scaled) : std::floor(scaled)) / scale);
}

Result<Value> filter_default(Runtime& rt, const Value& input, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("default", args, {"default_value", "boolean"}));
  const bool use_default = input.is_undefined() || (a.get_flag(1, false) && !is_truthy(input));
  return use_default ? a.get_or(0, rt.heap().empty_string()) : input;
}

Result<Value> filter_attr(Runtime& rt, const Value& input, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("attr", args, {"name"}));
  if (!a.get(0).is_string()) return type_error("attr needs a string name");
  const std::string& name = a.get(0).as_string();
  if (input.kind() == ValueKind::kDict) {
    if (BuiltinFn fn = find_method(ValueKind::kDict, name)) return bind_method(rt, input, name, fn);
    return Value::undefined(UndefinedReason::kAttribute, &name, input.kind());
  }
  return get_attribute(rt, input, name);
}

constexpr NamedFn<FilterFn> kConvertFilters[] = {
    {"tojson", filter_tojson}, {"int", filter_int},         {"float", filter_float},
    {"abs", filter_abs},       {"round", filter_round},     {"default", filter_default},
    {"d", filter_default},     {"attr", filter_attr},
};

}  // namespace

FilterFn find_convert_filter(std::string_view name) {
  return find_named(kConvertFilters, name);
}

}  // namespace met::jinja
