// GPT-2 byte <-> code point tables. Tested by tests/tokenizer/byte_level_test.cc.
#include "tokenizer/byte_level.h"

#include <array>

#include "tokenizer/utf8.h"

namespace met {
namespace {

constexpr bool is_printable_byte(int b) {
  return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

constexpr std::array<char16_t, 256> make_byte_to_cp() {
  std::array<char16_t, 256> table{};
  int next = 0;
  for (int b = 0; b < 256; ++b) {
    table[b] = is_printable_byte(b) ? static_cast<char16_t>(b) : static_cast<char16_t>(256 + next++);
  }
  return table;
}

constexpr std::array<char16_t, 256> kByteToCp = make_byte_to_cp();

// Code points of the alphabet are all below 0x144; -1 marks "not in it".
constexpr std::array<int16_t, 0x144> make_cp_to_byte() {
  std::array<int16_t, 0x144> table{};
  for (auto& v : table) v = -1;
  for (int b = 0; b < 256; ++b) table[kByteToCp[b]] = static_cast<int16_t>(b);
  return table;
}

constexpr std::array<int16_t, 0x144> kCpToByte = make_cp_to_byte();

}  // namespace

char32_t byte_level_code_point(uint8_t byte) { return kByteToCp[byte]; }

std::optional<uint8_t> byte_level_byte(char32_t cp) {
  if (cp >= kCpToByte.size() || kCpToByte[cp] < 0) return std::nullopt;
  return static_cast<uint8_t>(kCpToByte[cp]);
}

void append_byte_level(std::string& out, std::string_view raw) {
  for (char c : raw) append_utf8(out, kByteToCp[static_cast<uint8_t>(c)]);
}

std::string to_byte_level(std::string_view raw) {
  std::string out;
  out.reserve(raw.size() * 2);
  append_byte_level(out, raw);
  return out;
}

std::string from_byte_level(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const Utf8Char c = decode_utf8(text, pos);
    const std::optional<uint8_t> byte =
        c.status == Utf8Status::kOk ? byte_level_byte(c.code_point) : std::nullopt;
    if (byte) {
      out += static_cast<char>(*byte);
    } else {
      out.append(text.substr(pos, c.length));
    }
    pos += c.length;
  }
  return out;
}

}  // namespace met
