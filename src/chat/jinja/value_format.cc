// str() and repr(). Tested by tests/chat/value_format_test.cc.
#include "chat/jinja/value_format.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "chat/jinja/callable.h"
#include "chat/jinja/errors.h"
#include "chat/jinja/utf8.h"

namespace met::jinja {
namespace {

Status append_repr_at(const Value& v, std::string& out, size_t max_bytes, int depth);

// Characters Python's str.isprintable() rejects besides ASCII controls.
bool is_unprintable(char32_t c) {
  return c < 0x20 || (c >= 0x7F && c <= 0xA0) || c == 0xAD || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200F) || (c >= 0x2028 && c <= 0x202F) ||
         (c >= 0x205F && c <= 0x2064) || c == 0x3000 || c == 0xFEFF ||
         (c >= 0xE000 && c <= 0xF8FF) || (c >= 0xFFF9 && c <= 0xFFFB) ||
         (c >= 0xD800 && c <= 0xDFFF);
}

void append_escape(char32_t c, std::string& out) {
  switch (c) {
    case '\n': out += "\\n"; return;
    case '\r': out += "\\r"; return;
    case '\t': out += "\\t"; return;
    default: break;
  }
  if (c < 0x100) {
    out += fmt::format("\\x{:02x}", static_cast<uint32_t>(c));
  } else if (c < 0x10000) {
    out += fmt::format("\\u{:04x}", static_cast<uint32_t>(c));
  } else {
    out += fmt::format("\\U{:08x}", static_cast<uint32_t>(c));
  }
}

Status check_size(const std::string& out, size_t max_bytes) {
  if (out.size() > max_bytes) return limit_error("printing a value needs more than {} bytes", max_bytes);
  return ok_status();
}

Status append_items(const std::vector<Value>& items, std::string& out, size_t max_bytes, int depth) {
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ", ";
    MET_RETURN_IF_ERROR(append_repr_at(items[i], out, max_bytes, depth + 1));
    MET_RETURN_IF_ERROR(check_size(out, max_bytes));
  }
  return ok_status();
}

Status append_dict(const DictObj& d, std::string& out, size_t max_bytes, int depth) {
  out += '{';
  bool first = true;
  for (const auto& [key, value] : d.entries) {
    if (!first) out += ", ";
    first = false;
    MET_RETURN_IF_ERROR(append_repr_at(key, out, max_bytes, depth + 1));
    out += ": ";
    MET_RETURN_IF_ERROR(append_repr_at(value, out, max_bytes, depth + 1));
    MET_RETURN_IF_ERROR(check_size(out, max_bytes));
  }
  out += '}';
  return ok_status();
}

Status append_repr_at(const Value& v, std::string& out, size_t max_bytes, int depth) {
  if (depth > kMaxValueDepth) {
    return limit_error("a value is nested deeper than {} levels (or contains itself)", kMaxValueDepth);
  }
  switch (v.kind()) {
    case ValueKind::kString:
      append_string_repr(v.as_string(), out);
      return ok_status();
    case ValueKind::kList:
      out += '[';
      MET_RETURN_IF_ERROR(append_items(v.as_list().items, out, max_bytes, depth));
      out += ']';
      return ok_status();
    case ValueKind::kTuple:
      out += '(';
      MET_RETURN_IF_ERROR(append_items(v.as_list().items, out, max_bytes, depth));
      out += v.as_list().items.size() == 1 ? ",)" : ")";
      return ok_status();
    case ValueKind::kDict:
      return append_dict(v.as_dict(), out, max_bytes, depth);
    case ValueKind::kNamespace:
      out += "<Namespace ";
      MET_RETURN_IF_ERROR(append_dict(v.as_dict(), out, max_bytes, depth));
      out += '>';
      return ok_status();
    case ValueKind::kUndefined:
      out += "Undefined";
      return ok_status();
    case ValueKind::kNone:
    case ValueKind::kBool:
    case ValueKind::kInt:
    case ValueKind::kFloat:
    case ValueKind::kFunction:
    case ValueKind::kLoop:
      return append_str(v, out, max_bytes);
  }
  return ok_status();
}

}  // namespace

void append_float_repr(double d, std::string& out) {
  if (std::isnan(d)) {
    out += "nan";
    return;
  }
  if (std::isinf(d)) {
    out += d < 0 ? "-inf" : "inf";
    return;
  }
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<size_t>(r.ptr - buf));  // [-]D[.DDD]e(+|-)XX
  if (sci.front() == '-') {
    out += '-';
    sci.remove_prefix(1);
  }
  const size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e)) {
    if (c != '.') digits += c;
  }
  const int exponent = std::atoi(std::string(sci.substr(e + 1)).c_str());
  const int decpt = exponent + 1;  // digits before the decimal point
  const int ndigits = static_cast<int>(digits.size());
  if (decpt > 16 || decpt <= -4) {
    out += digits[0];
    if (ndigits > 1) out.append(".").append(digits, 1);
    out += fmt::format("e{}{:02d}", exponent < 0 ? '-' : '+', std::abs(exponent));
  } else if (decpt <= 0) {
    out.append("0.").append(static_cast<size_t>(-decpt), '0').append(digits);
  } else if (decpt >= ndigits) {
    out.append(digits).append(static_cast<size_t>(decpt - ndigits), '0').append(".0");
  } else {
    out.append(digits, 0, static_cast<size_t>(decpt)).append(".").append(digits, static_cast<size_t>(decpt));
  }
}

void append_string_repr(std::string_view s, std::string& out) {
  const bool has_single = s.find('\'') != std::string_view::npos;
  const bool has_double = s.find('"') != std::string_view::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  out += quote;
  for (size_t pos = 0; pos < s.size();) {
    const size_t start = pos;
    const char32_t c = decode_utf8(s, pos);
    if (c == static_cast<char32_t>(quote) || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (is_unprintable(c)) {
      append_escape(c, out);
    } else {
      out.append(s.substr(start, pos - start));
    }
  }
  out += quote;
}

Status append_str(const Value& v, std::string& out, size_t max_bytes) {
  switch (v.kind()) {
    case ValueKind::kUndefined:
      return ok_status();
    case ValueKind::kNone:
      out += "None";
      return ok_status();
    case ValueKind::kBool:
      out += v.as_bool() ? "True" : "False";
      return ok_status();
    case ValueKind::kInt:
      out += fmt::format("{}", v.as_int());
      return ok_status();
    case ValueKind::kFloat:
      append_float_repr(v.as_float(), out);
      return ok_status();
    case ValueKind::kString:
      out += v.as_string();
      return ok_status();
    case ValueKind::kFunction:
      out += fmt::format("<function {}>", v.as_function().name);
      return ok_status();
    case ValueKind::kLoop:
      out += "<LoopContext>";
      return ok_status();
    case ValueKind::kList:
    case ValueKind::kTuple:
    case ValueKind::kDict:
    case ValueKind::kNamespace:
      return append_repr_at(v, out, max_bytes, 0);
  }
  return ok_status();
}

Status append_repr(const Value& v, std::string& out, size_t max_bytes) {
  return append_repr_at(v, out, max_bytes, 0);
}

}  // namespace met::jinja
