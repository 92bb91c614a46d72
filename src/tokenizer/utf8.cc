// Strict UTF-8 decoding and replacement. Tested by tests/tokenizer/utf8_test.cc.
#include "tokenizer/utf8.h"

#include "core/check.h"

namespace met {
namespace {

struct LeadInfo {
  uint8_t length;       // 0: never a valid lead byte
  uint8_t second_low;   // allowed range of the second byte
  uint8_t second_high;
};

LeadInfo lead_info(uint8_t b) {
  if (b < 0x80) return {1, 0, 0};
  if (b >= 0xC2 && b <= 0xDF) return {2, 0x80, 0xBF};
  if (b == 0xE0) return {3, 0xA0, 0xBF};
  if (b == 0xED) return {3, 0x80, 0x9F};  // excludes surrogates
  if (b >= 0xE1 && b <= 0xEF) return {3, 0x80, 0xBF};
  if (b == 0xF0) return {4, 0x90, 0xBF};
  if (b >= 0xF1 && b <= 0xF3) return {4, 0x80, 0xBF};
  if (b == 0xF4) return {4, 0x80, 0x8F};  // nothing past U+10FFFF
  return {0, 0, 0};
}

}  // namespace

Utf8Char decode_utf8(std::string_view s, size_t pos) {
  MET_DCHECK(pos < s.size());
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(s[i]); };
  const uint8_t b0 = byte(pos);
  const LeadInfo info = lead_info(b0);
  if (info.length == 1) return {b0, 1, Utf8Status::kOk};
  if (info.length == 0) return {kReplacementChar, 1, Utf8Status::kInvalid};
  char32_t cp = b0 & (0xFF >> (info.length + 1));
  for (uint8_t k = 1; k < info.length; ++k) {
    if (pos + k >= s.size()) return {kReplacementChar, k, Utf8Status::kIncomplete};
    const uint8_t b = byte(pos + k);
    const uint8_t low = k == 1 ? info.second_low : 0x80;
    const uint8_t high = k == 1 ? info.second_high : 0xBF;
    if (b < low || b > high) return {kReplacementChar, k, Utf8Status::kInvalid};
    cp = (cp << 6) | (b & 0x3F);
  }
  return {cp, info.length, Utf8Status::kOk};
}

void append_utf8(std::string& out, char32_t cp) {
  if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) cp = kReplacementChar;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

bool is_valid_utf8(std::string_view s) {
  for (size_t pos = 0; pos < s.size();) {
    if (static_cast<uint8_t>(s[pos]) < 0x80) {
      ++pos;
      continue;
    }
    const Utf8Char c = decode_utf8(s, pos);
    if (c.status != Utf8Status::kOk) return false;
    pos += c.length;
  }
  return true;
}

std::string sanitize_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t pos = 0; pos < s.size();) {
    const Utf8Char c = decode_utf8(s, pos);
    if (c.status == Utf8Status::kOk) {
      out.append(s.substr(pos, c.length));
    } else {
      out.append(kReplacementUtf8);
    }
    pos += c.length;
  }
  return out;
}

size_t utf8_incomplete_tail(std::string_view s) {
  // A lead byte can be at most 3 bytes before the end of an incomplete tail.
  const size_t first = s.size() > 3 ? s.size() - 3 : 0;
  for (size_t pos = s.size(); pos > first;) {
    --pos;
    const auto b = static_cast<uint8_t>(s[pos]);
    if ((b & 0xC0) == 0x80) continue;  // continuation byte: keep looking for its lead
    const Utf8Char c = decode_utf8(s, pos);
    return c.status == Utf8Status::kIncomplete ? s.size() - pos : 0;
  }
  return 0;
}

}  // namespace met
