// UTF-8 helpers. Tested by tests/chat/utf8_test.cc.
#include "chat/jinja/utf8.h"

#include "tokenizer/utf8.h"

namespace met::jinja {
namespace {

constexpr char32_t kReplacement = 0xFFFD;

// Latin Extended-A pairs upper/lower as even/odd except in these ranges.
bool latin_ext_odd_is_upper(char32_t c) {
  return (c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E);
}

char32_t simple_upper(char32_t c) {
  if (c < 0x80) return (c >= 'a' && c <= 'z') ? c - 32 : c;
  if (c == 0xB5) return 0x39C;
  if (c >= 0xE0 && c <= 0xFE && c != 0xF7) return c - 32;
  if (c == 0xFF) return 0x178;
  if (c >= 0x100 && c <= 0x17F) {
    if (c == 0x131) return 'I';
    if (c == 0x17F) return 'S';
    if (c == 0x138 || c == 0x149 || c == 0x130) return c;
    const bool odd = (c & 1) != 0;
    if (latin_ext_odd_is_upper(c)) return odd ? c : c - 1;
    return odd ? c - 1 : c;
  }
  if (c >= 0x3B1 && c <= 0x3C9 && c != 0x3C2) return c - 32;
  if (c == 0x3C2) return 0x3A3;
  if (c == 0x3AC) return 0x386;
  if (c >= 0x3AD && c <= 0x3AF) return c - 37;
  if (c == 0x3CC) return 0x38C;
  if (c == 0x3CD || c == 0x3CE) return c - 63;
  if (c >= 0x430 && c <= 0x44F) return c - 32;
  if (c >= 0x450 && c <= 0x45F) return c - 80;
  if (c >= 0xFF41 && c <= 0xFF5A) return c - 32;
  return c;
}

char32_t simple_lower(char32_t c) {
  if (c < 0x80) return (c >= 'A' && c <= 'Z') ? c + 32 : c;
  if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 32;
  if (c == 0x178) return 0xFF;
  if (c >= 0x100 && c <= 0x17F) {
    if (c == 0x130) return 'i';
    if (c == 0x131 || c == 0x138 || c == 0x149 || c == 0x17F) return c;
    const bool odd = (c & 1) != 0;
    if (latin_ext_odd_is_upper(c)) return odd ? c + 1 : c;
    return odd ? c : c + 1;
  }
  if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 32;
  if (c == 0x386) return 0x3AC;
  if (c >= 0x388 && c <= 0x38A) return c + 37;
  if (c == 0x38C) return 0x3CC;
  if (c == 0x38E || c == 0x38F) return c + 63;
  if (c >= 0x410 && c <= 0x42F) return c + 32;
  if (c >= 0x400 && c <= 0x40F) return c + 80;
  if (c >= 0xFF21 && c <= 0xFF3A) return c + 32;
  return c;
}

bool is_punctuation_block(char32_t c) {
  return (c >= 0x2000 && c <= 0x2BFF) || (c >= 0x3000 && c <= 0x303F) ||
         (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0xFF00 && c <= 0xFF0F) ||
         (c >= 0xFF1A && c <= 0xFF20) || (c >= 0x1F000 && c <= 0x1FAFF) ||
         (c >= 0xD800 && c <= 0xDFFF) || c == 0xFFFD || c == 0xFEFF;
}

}  // namespace

char32_t decode_utf8(std::string_view s, size_t& pos) {
  // The tokenizer's decoder, stepping one byte past anything invalid.
  const Utf8Char c = met::decode_utf8(s, pos);
  if (c.status != Utf8Status::kOk) {
    ++pos;
    return kReplacement;
  }
  pos += c.length;
  return c.code_point;
}

void append_utf8(std::string& out, char32_t cp) { met::append_utf8(out, cp); }

bool is_ascii(std::string_view s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

size_t utf8_length(std::string_view s) {
  if (is_ascii(s)) return s.size();
  size_t n = 0;
  for (size_t pos = 0; pos < s.size(); ++n) decode_utf8(s, pos);
  return n;
}

std::vector<size_t> utf8_offsets(std::string_view s) {
  std::vector<size_t> offsets;
  offsets.reserve(s.size() + 1);
  for (size_t pos = 0; pos < s.size();) {
    offsets.push_back(pos);
    decode_utf8(s, pos);
  }
  offsets.push_back(s.size());
  return offsets;
}

bool is_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000;
}

bool is_digit(char32_t c) { return c >= '0' && c <= '9'; }

bool is_alpha(char32_t c) {
  if (c < 0x80) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  if (c < 0x100) return c >= 0xC0 && c != 0xD7 && c != 0xF7 ? true : (c == 0xAA || c == 0xB5 || c == 0xBA);
  return !is_space(c) && !is_punctuation_block(c);
}

bool is_word_char(char32_t c) { return c == '_' || is_digit(c) || is_alpha(c); }

bool is_cased(char32_t c) { return simple_upper(c) != c || simple_lower(c) != c || c == 0xDF; }
bool is_upper(char32_t c) { return simple_lower(c) != c; }
bool is_lower(char32_t c) { return simple_upper(c) != c || c == 0xDF; }

void append_upper(std::string& out, char32_t c) {
  if (c == 0xDF) {
    out += "SS";
    return;
  }
  append_utf8(out, simple_upper(c));
}

void append_lower(std::string& out, char32_t c) { append_utf8(out, simple_lower(c)); }

std::string to_upper(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t pos = 0; pos < s.size();) append_upper(out, decode_utf8(s, pos));
  return out;
}

std::string to_lower(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t pos = 0; pos < s.size();) append_lower(out, decode_utf8(s, pos));
  return out;
}

}  // namespace met::jinja
