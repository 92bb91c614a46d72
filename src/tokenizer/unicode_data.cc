// utf8proc adapters. Tested by tests/tokenizer/unicode_data_test.cc.
#include "tokenizer/unicode_data.h"

#include <cstdlib>

#include <utf8proc.h>

#include "core/check.h"

namespace met {
namespace {

std::string map_with(std::string_view text, int options) {
  if (text.empty()) return {};
  utf8proc_uint8_t* out = nullptr;
  const utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                                          static_cast<utf8proc_ssize_t>(text.size()), &out,
                                          static_cast<utf8proc_option_t>(options));
  MET_CHECK(n >= 0, "utf8proc_map failed on sanitized text: {}", utf8proc_errmsg(n));
  std::string result(reinterpret_cast<const char*>(out), static_cast<size_t>(n));
  std::free(out);
  return result;
}

utf8proc_category_t category(char32_t cp) {
  return utf8proc_category(static_cast<utf8proc_int32_t>(cp));
}

}  // namespace

std::string normalize_nfd(std::string_view text) {
  return map_with(text, UTF8PROC_STABLE | UTF8PROC_DECOMPOSE);
}

char32_t nfd_first(char32_t cp) {
  utf8proc_int32_t out[8];
  int last_boundclass = 0;
  const utf8proc_ssize_t n = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(cp), out, 8,
                                                     UTF8PROC_DECOMPOSE, &last_boundclass);
  return n > 0 ? static_cast<char32_t>(out[0]) : cp;  // n > 8 fills none; no canonical decomposition is that long
}

std::string normalize_nfkc(std::string_view text) {
  return map_with(text, UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT);
}

char32_t to_lower(char32_t cp) {
  return static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp)));
}

bool is_letter(char32_t cp) {
  const auto c = category(cp);
  return c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_LO;
}

bool is_uppercase_letter(char32_t cp) {
  const auto c = category(cp);
  return c == UTF8PROC_CATEGORY_LU || c == UTF8PROC_CATEGORY_LT;
}

bool is_number(char32_t cp) {
  const auto c = category(cp);
  return c >= UTF8PROC_CATEGORY_ND && c <= UTF8PROC_CATEGORY_NO;
}

bool is_punctuation(char32_t cp) {
  const auto c = category(cp);
  return c >= UTF8PROC_CATEGORY_PC && c <= UTF8PROC_CATEGORY_PO;
}

bool is_nonspacing_mark(char32_t cp) { return category(cp) == UTF8PROC_CATEGORY_MN; }

bool is_other(char32_t cp) {
  const auto c = category(cp);
  return c == UTF8PROC_CATEGORY_CN || (c >= UTF8PROC_CATEGORY_CC && c <= UTF8PROC_CATEGORY_CO);
}

bool is_white_space(char32_t cp) {
  // PropList.txt's White_Space, which has not changed since Unicode 6.3.
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
         cp == 0x205F || cp == 0x3000;
}

bool is_ascii_punctuation(char32_t cp) {
  return (cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) ||
         (cp >= 123 && cp <= 126);
}

bool is_cjk_ideograph(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

}  // namespace met
