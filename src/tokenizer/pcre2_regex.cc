// PCRE2 adapter. Tested by tests/tokenizer/pcre2_regex_test.cc.
#include "tokenizer/pcre2_regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <utility>

namespace met {
namespace {

std::string pcre2_message(int error_code) {
  PCRE2_UCHAR buffer[256];
  const int n = pcre2_get_error_message(error_code, buffer, sizeof(buffer));
  if (n < 0) return "unknown PCRE2 error " + std::to_string(error_code);
  return std::string(reinterpret_cast<const char*>(buffer), static_cast<size_t>(n));
}

}  // namespace

RegexScratch::RegexScratch() : data_(pcre2_match_data_create(1, nullptr)) {
  MET_CHECK(data_ != nullptr, "pcre2_match_data_create: out of memory");
}

RegexScratch::~RegexScratch() { pcre2_match_data_free(data_); }

Result<Pcre2Regex> Pcre2Regex::compile(std::string_view pattern) {
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_UCP, &error_code, &error_offset, nullptr);
  if (code == nullptr) {
    return invalid_argument("regex /{}/: {} at offset {}", pattern, pcre2_message(error_code),
                            error_offset);
  }
  // Without JIT (unsupported platform, no executable memory) the interpreter
  // gives the same matches, only slower.
  (void)pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  return Pcre2Regex(code, std::string(pattern));
}

Pcre2Regex::Pcre2Regex(Pcre2Regex&& other) noexcept
    : code_(std::exchange(other.code_, nullptr)), pattern_(std::move(other.pattern_)) {}

Pcre2Regex& Pcre2Regex::operator=(Pcre2Regex&& other) noexcept {
  if (this != &other) {
    pcre2_code_free(code_);
    code_ = std::exchange(other.code_, nullptr);
    pattern_ = std::move(other.pattern_);
  }
  return *this;
}

Pcre2Regex::~Pcre2Regex() { pcre2_code_free(code_); }

std::optional<RegexMatch> Pcre2Regex::find(std::string_view subject, size_t start,
                                           RegexScratch& scratch) const {
  const auto* text = reinterpret_cast<PCRE2_SPTR>(subject.data());
  int rc = pcre2_match(code_, text, subject.size(), start, PCRE2_NO_UTF_CHECK, scratch.data_,
                       nullptr);
  if (rc < 0 && rc != PCRE2_ERROR_NOMATCH) {
    rc = pcre2_match(code_, text, subject.size(), start, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT,
                     scratch.data_, nullptr);
  }
  if (rc < 0) return std::nullopt;
  const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(scratch.data_);
  return RegexMatch{ovector[0], ovector[1]};
}

}  // namespace met
