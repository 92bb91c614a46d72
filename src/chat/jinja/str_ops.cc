// Python str algorithms. Tested by tests/chat/str_ops_test.cc.
#include "chat/jinja/str_ops.h"

#include <algorithm>

#include "chat/jinja/utf8.h"

namespace met::jinja {
namespace {

bool in_set(char32_t c, std::optional<std::string_view> chars) {
  if (!chars) return is_space(c);
  for (size_t pos = 0; pos < chars->size();) {
    if (decode_utf8(*chars, pos) == c) return true;
  }
  return false;
}

// The code point that ends at byte `end` and where it starts.
char32_t decode_before(std::string_view s, size_t end, size_t& start) {
  start = end - 1;
  while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80 && end - start < 4) --start;
  size_t pos = start;
  const char32_t c = decode_utf8(s, pos);
  if (pos != end) {  // not a valid sequence ending here: treat the last byte alone
    start = end - 1;
    return 0xFFFD;
  }
  return c;
}

// Length in bytes of a line break at s[pos], or 0.
size_t line_break_at(std::string_view s, size_t pos) {
  const auto c = static_cast<unsigned char>(s[pos]);
  if (c == '\r') return pos + 1 < s.size() && s[pos + 1] == '\n' ? 2 : 1;
  if (c == '\n' || c == '\v' || c == '\f' || (c >= 0x1C && c <= 0x1E)) return 1;
  if (s.substr(pos, 2) == "\xC2\x85") return 2;
  if (s.substr(pos, 3) == "\xE2\x80\xA8" || s.substr(pos, 3) == "\xE2\x80\xA9") return 3;
  return 0;
}

std::vector<std::string_view> split_whitespace(std::string_view s, int64_t max_split) {
  std::vector<std::string_view> parts;
  size_t pos = 0;
  while (true) {
    size_t start = pos;  // skip leading whitespace
    while (start < s.size()) {
      size_t next = start;
      if (!is_space(decode_utf8(s, next))) break;
      start = next;
    }
    if (start >= s.size()) break;
    if (max_split >= 0 && static_cast<int64_t>(parts.size()) == max_split) {
      parts.push_back(s.substr(start));  // Python keeps the rest's trailing whitespace
      break;
    }
    size_t end = start;
    while (end < s.size()) {
      size_t next = end;
      if (is_space(decode_utf8(s, next))) break;
      end = next;
    }
    parts.push_back(s.substr(start, end - start));
    pos = end;
  }
  return parts;
}

}  // namespace

std::string_view py_strip(std::string_view s, std::optional<std::string_view> chars, StripSide side) {
  if (side != StripSide::kRight) {
    size_t pos = 0;
    while (pos < s.size()) {
      size_t next = pos;
      if (!in_set(decode_utf8(s, next), chars)) break;
      pos = next;
    }
    s.remove_prefix(pos);
  }
  if (side != StripSide::kLeft) {
    while (!s.empty()) {
      size_t start = 0;
      if (!in_set(decode_before(s, s.size(), start), chars)) break;
      s = s.substr(0, start);
    }
  }
  return s;
}

std::vector<std::string_view> py_split(std::string_view s, std::optional<std::string_view> sep,
                                       int64_t max_split) {
  if (!sep) return split_whitespace(s, max_split);
  std::vector<std::string_view> parts;
  size_t pos = 0;
  while (max_split < 0 || static_cast<int64_t>(parts.size()) < max_split) {
    const size_t at = s.find(*sep, pos);
    if (at == std::string_view::npos) break;
    parts.push_back(s.substr(pos, at - pos));
    pos = at + sep->size();
  }
  parts.push_back(s.substr(pos));
  return parts;
}

std::vector<std::string_view> py_rsplit(std::string_view s, std::optional<std::string_view> sep,
                                        int64_t max_split) {
  if (max_split < 0) return py_split(s, sep, max_split);
  std::vector<std::string_view> parts;
  if (!sep) {
    std::string_view rest = py_strip(s, std::nullopt, StripSide::kRight);
    while (!rest.empty() && static_cast<int64_t>(parts.size()) < max_split) {
      size_t start = rest.size();
      size_t prev = 0;
      while (start > 0 && !is_space(decode_before(rest, start, prev))) start = prev;
      parts.push_back(rest.substr(start));
      rest = py_strip(rest.substr(0, start), std::nullopt, StripSide::kRight);
    }
    if (!rest.empty()) parts.push_back(rest);
  } else {
    size_t end = s.size();
    while (static_cast<int64_t>(parts.size()) < max_split) {
      if (end < sep->size()) break;
      const size_t at = s.rfind(*sep, end - sep->size());
      if (at == std::string_view::npos) break;
      parts.push_back(s.substr(at + sep->size(), end - at - sep->size()));
      end = at;
    }
    parts.push_back(s.substr(0, end));
  }
  std::reverse(parts.begin(), parts.end());
  return parts;
}

std::vector<std::string_view> py_splitlines(std::string_view s, bool keep_ends) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  size_t pos = 0;
  while (pos < s.size()) {
    const size_t br = line_break_at(s, pos);
    if (br == 0) {
      ++pos;
      continue;
    }
    lines.push_back(s.substr(start, pos - start + (keep_ends ? br : 0)));
    pos += br;
    start = pos;
  }
  if (start < s.size()) lines.push_back(s.substr(start));
  return lines;
}

size_t replaced_size(std::string_view s, std::string_view old, std::string_view replacement, int64_t count) {
  int64_t n = py_count(s, old);
  if (count >= 0) n = std::min(n, count);
  return s.size() + static_cast<size_t>(n) * replacement.size() - static_cast<size_t>(n) * old.size();
}

std::string py_replace(std::string_view s, std::string_view old, std::string_view replacement,
                       int64_t count) {
  std::string out;
  int64_t done = 0;
  if (old.empty()) {
    size_t pos = 0;
    while (count < 0 || done < count) {
      out += replacement;
      ++done;
      if (pos >= s.size()) return out;
      const size_t start = pos;
      decode_utf8(s, pos);
      out.append(s.substr(start, pos - start));
    }
    out.append(s.substr(pos));
    return out;
  }
  size_t pos = 0;
  while (count < 0 || done < count) {
    const size_t at = s.find(old, pos);
    if (at == std::string_view::npos) break;
    out.append(s.substr(pos, at - pos)).append(replacement);
    pos = at + old.size();
    ++done;
  }
  out.append(s.substr(pos));
  return out;
}

int64_t py_find(std::string_view s, std::string_view sub, bool from_right) {
  const size_t at = from_right ? s.rfind(sub) : s.find(sub);
  if (at == std::string_view::npos) return -1;
  return static_cast<int64_t>(utf8_length(s.substr(0, at)));
}

int64_t py_count(std::string_view s, std::string_view sub) {
  if (sub.empty()) return static_cast<int64_t>(utf8_length(s)) + 1;
  int64_t n = 0;
  for (size_t at = s.find(sub); at != std::string_view::npos; at = s.find(sub, at + sub.size())) ++n;
  return n;
}

std::string py_title(std::string_view s) {
  std::string out;
  bool previous_cased = false;
  for (size_t pos = 0; pos < s.size();) {
    const char32_t c = decode_utf8(s, pos);
    if (previous_cased) append_lower(out, c);
    else append_upper(out, c);
    previous_cased = is_cased(c);
  }
  return out;
}

std::string py_capitalize(std::string_view s) {
  std::string out;
  for (size_t pos = 0; pos < s.size();) {
    const bool first = pos == 0;
    const char32_t c = decode_utf8(s, pos);
    if (first) append_upper(out, c);
    else append_lower(out, c);
  }
  return out;
}

std::string jinja_title(std::string_view s) {
  auto is_boundary = [](char32_t c) {
    return is_space(c) || c == '-' || c == '(' || c == '{' || c == '[' || c == '<';
  };
  std::string out;
  bool word_start = true;
  for (size_t pos = 0; pos < s.size();) {
    const char32_t c = decode_utf8(s, pos);
    if (is_boundary(c)) {
      append_utf8(out, c);
      word_start = true;
    } else {
      if (word_start) append_upper(out, c);
      else append_lower(out, c);
      word_start = false;
    }
  }
  return out;
}

int64_t word_count(std::string_view s) {
  int64_t n = 0;
  bool in_word = false;
  for (size_t pos = 0; pos < s.size();) {
    const bool w = is_word_char(decode_utf8(s, pos));
    if (w && !in_word) ++n;
    in_word = w;
  }
  return n;
}

}  // namespace met::jinja
