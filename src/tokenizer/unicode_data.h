// Unicode facts the tokenizers need, from utf8proc (no ASCII approximations):
// normalization forms (NFD, NFKC), simple lowercase mapping, and character
// classes (general categories and the White_Space property).
// Invariants: inputs are valid UTF-8 (callers sanitize first); outputs are
// valid UTF-8.
// Threading: pure functions; utf8proc's tables are constant.
// Tested by tests/tokenizer/unicode_data_test.cc.
#pragma once

#include <string>
#include <string_view>

namespace met {

// REQUIRES: `text` is valid UTF-8.
std::string normalize_nfd(std::string_view text);
std::string normalize_nfkc(std::string_view text);
// The first code point of `cp`'s full canonical decomposition (cp itself if
// it has none): a Hangul syllable's leading consonant, an accented letter's
// base letter (llama.cpp's NFD table for WordPiece keeps only that).
char32_t nfd_first(char32_t cp);

// Unicode's simple (one code point to one) lowercase mapping.
char32_t to_lower(char32_t cp);

bool is_letter(char32_t cp);             // L*
bool is_uppercase_letter(char32_t cp);   // Lu, Lt
bool is_number(char32_t cp);             // N*
bool is_punctuation(char32_t cp);        // P*
bool is_nonspacing_mark(char32_t cp);    // Mn
bool is_other(char32_t cp);              // C*: Cc, Cf, Cs, Co, Cn
bool is_white_space(char32_t cp);        // the White_Space property
bool is_ascii_punctuation(char32_t cp);  // !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~
// The CJK ideograph blocks BERT isolates as single-character words.
bool is_cjk_ideograph(char32_t cp);

}  // namespace met
