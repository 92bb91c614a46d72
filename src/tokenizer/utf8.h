// UTF-8 helpers for the tokenizer: strict decoding (no overlong forms, no
// surrogates, nothing past U+10FFFF), encoding, validation, and replacement of
// invalid input by U+FFFD.
// Invariants: a replaced string is valid UTF-8; each maximal invalid subpart
// (Unicode's "best practice", what Python's errors='replace' does) becomes one
// U+FFFD, so "\xE2\x82" + "A" gives "\uFFFD" + "A".
// Threading: pure functions. Tested by tests/tokenizer/utf8_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace met {

inline constexpr char32_t kReplacementChar = 0xFFFD;
inline constexpr std::string_view kReplacementUtf8 = "\xEF\xBF\xBD";

enum class Utf8Status : uint8_t {
  kOk,          // a complete, valid sequence
  kInvalid,     // can never become valid, whatever follows
  kIncomplete,  // a valid prefix cut short by the end of the input
};

struct Utf8Char {
  char32_t code_point = kReplacementChar;  // kReplacementChar unless kOk
  uint8_t length = 1;                       // bytes consumed (>= 1)
  Utf8Status status = Utf8Status::kOk;
};

// Decodes the sequence starting at s[pos]. REQUIRES: pos < s.size().
Utf8Char decode_utf8(std::string_view s, size_t pos);

// Appends the UTF-8 encoding of `cp` (U+FFFD for a surrogate or cp > U+10FFFF).
void append_utf8(std::string& out, char32_t cp);

bool is_valid_utf8(std::string_view s);

// A copy of `s` with every maximal invalid subpart (and an incomplete tail)
// replaced by U+FFFD.
std::string sanitize_utf8(std::string_view s);

// The number of bytes at the end of `s` that form a valid but incomplete
// sequence (0..3): bytes a streaming decoder must hold for the next chunk.
size_t utf8_incomplete_tail(std::string_view s);

}  // namespace met
