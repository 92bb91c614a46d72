// UTF-8 helpers with Python's view of a str as a sequence of code points:
// decoding (an invalid byte reads as one U+FFFD so nothing loops or overreads),
// code-point counts and offsets for len() and slicing, and the character
// classes and simple case mapping str methods need (ASCII, Latin-1, Latin
// Extended-A, Greek, Cyrillic and fullwidth forms; other scripts are caseless).
// Threading: pure functions. Tested by tests/chat/utf8_test.cc.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace met::jinja {

// Decodes the code point at s[pos] and advances pos past it.
// REQUIRES: pos < s.size().
char32_t decode_utf8(std::string_view s, size_t& pos);
void append_utf8(std::string& out, char32_t cp);
// Number of code points (Python's len(str)).
size_t utf8_length(std::string_view s);
// Byte offsets of every code point, plus s.size() at the end.
std::vector<size_t> utf8_offsets(std::string_view s);
bool is_ascii(std::string_view s);

// str.isspace() for one character (what split() and strip() remove).
bool is_space(char32_t c);
// A letter or digit as \w and str.isalnum() see it (approximate past ASCII and
// Latin-1: any code point outside known punctuation and symbol blocks).
bool is_word_char(char32_t c);
bool is_digit(char32_t c);
bool is_alpha(char32_t c);
// Whether the character has case (str.title() capitalizes after a caseless one).
bool is_cased(char32_t c);
bool is_upper(char32_t c);
bool is_lower(char32_t c);
// Case mapping of whole strings, as str.upper() and str.lower() do ('ß'
// upper-cases to "SS").
std::string to_upper(std::string_view s);
std::string to_lower(std::string_view s);
// One character, appended (upper may append two for 'ß').
void append_upper(std::string& out, char32_t c);
void append_lower(std::string& out, char32_t c);

}  // namespace met::jinja
