// regex_to_gbnf: a JSON Schema `pattern` (the ECMA/Python regex subset:
// literals, escapes \d \w \s \D \W \S \n \t \r \f \v \xHH \uHHHH, classes
// [a-z] [^...], `.`, groups (...) (?:...), alternation, quantifiers * + ?
// {m} {m,} {m,n} (lazy `?` ignored), ^ and $ anchors at the ends of a
// top-level branch) to a GBNF expression over the *encoded* content of a JSON
// string whose decoded value the pattern matches (re.search semantics: an
// unanchored end may be followed or preceded by any characters).
// A matched `"` or `\` is emitted escaped; other control characters than
// \b \f \n \r \t are never produced. \d \w \s match ASCII only and \D \W \S
// exclude all non-ASCII, a subset of what Python's Unicode classes accept, so
// everything generated matches. Backreferences, lookaround, \b and other
// constructs are errors (InvalidArgument saying which, at which offset).
// Threading: pure function. Tested by tests/grammar/regex_to_gbnf_test.cc.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace met {

// `json_char_rule`: the name of a GBNF rule matching one encoded JSON string
// character (used for unanchored ends).
Result<std::string> regex_to_gbnf(std::string_view pattern, std::string_view json_char_rule);

}  // namespace met
