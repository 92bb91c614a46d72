// GPT-2's byte-level alphabet: every byte maps to one printable code point
// (the 188 printable Latin-1 bytes to themselves, the other 68 to U+0100..U+0143
// in byte order), so byte-level BPE vocabularies store raw bytes as text.
// Invariants: the mapping is a bijection between the 256 bytes and those 256
// code points; encode then decode gives the input back.
// Threading: pure functions over constant tables. Tested by
// tests/tokenizer/byte_level_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace met {

char32_t byte_level_code_point(uint8_t byte);
// The byte a code point stands for, or nullopt when it is not in the alphabet.
std::optional<uint8_t> byte_level_byte(char32_t cp);

// Appends the byte-level text of raw bytes: "Hello world" -> "HelloĠworld".
void append_byte_level(std::string& out, std::string_view raw);
std::string to_byte_level(std::string_view raw);

// Decodes byte-level text back to bytes. A character outside the alphabet
// (an added token's raw text, say) is copied through as its own UTF-8.
std::string from_byte_level(std::string_view text);

}  // namespace met
