// Pcre2Regex: an RAII owner of one compiled PCRE2 pattern (UTF + UCP, so \p{L},
// \s and friends follow Unicode properties exactly; JIT-compiled when the
// platform allows). RegexScratch owns the per-call match data.
// Invariants: a Pcre2Regex always holds compiled code; subjects passed to find()
// are valid UTF-8 (the UTF check is skipped for speed, callers sanitize).
// Threading: a compiled Pcre2Regex is immutable and may be shared by threads;
// a RegexScratch belongs to one thread at a time.
// Tested by tests/tokenizer/pcre2_regex_test.cc.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "core/status.h"

struct pcre2_real_code_8;
struct pcre2_real_match_data_8;

namespace met {

struct RegexMatch {
  size_t begin = 0;  // byte offsets into the subject
  size_t end = 0;
};

class RegexScratch {
 public:
  RegexScratch();
  ~RegexScratch();
  RegexScratch(const RegexScratch&) = delete;
  RegexScratch& operator=(const RegexScratch&) = delete;

 private:
  friend class Pcre2Regex;
  pcre2_real_match_data_8* data_;
};

class Pcre2Regex {
 public:
  // Compiles `pattern`; a syntax error names the offset and PCRE2's message.
  static Result<Pcre2Regex> compile(std::string_view pattern);

  Pcre2Regex(Pcre2Regex&& other) noexcept;
  Pcre2Regex& operator=(Pcre2Regex&& other) noexcept;
  Pcre2Regex(const Pcre2Regex&) = delete;
  Pcre2Regex& operator=(const Pcre2Regex&) = delete;
  ~Pcre2Regex();

  // The first match at or after `start` in `subject` (whose ends are the
  // string's ends for \z and lookarounds), or nullopt. A match that fails on a
  // resource limit (JIT stack, heap) is retried without JIT; if that fails too
  // it is reported as no match, so callers keep the rest as one piece.
  // REQUIRES: subject is valid UTF-8 and start is on a character boundary.
  std::optional<RegexMatch> find(std::string_view subject, size_t start,
                                 RegexScratch& scratch) const;

  const std::string& pattern() const { return pattern_; }

 private:
  Pcre2Regex(pcre2_real_code_8* code, std::string pattern) : code_(code), pattern_(std::move(pattern)) {}

  pcre2_real_code_8* code_;
  std::string pattern_;
};

}  // namespace met
