// compile_gbnf: llama.cpp's GBNF text to a Grammar.
//
// Syntax: rules `name ::= alternatives` (names [A-Za-z0-9_-]+), alternatives
// separated by `|`, sequences of items; items are string literals "..." with
// escapes \n \r \t \\ \" \[ \] \- \^ \xHH \uHHHH \UHHHHHHHH, character
// classes [a-z0-9_] and [^"\\], `.` (any code point), rule names and groups
// ( ... ); each item may take `*` `+` `?` `{m}` `{m,}` `{m,n}` `{,n}`.
// `#` starts a comment to the end of the line. A rule continues over lines
// after `::=`, after `|`, inside parentheses, and on a following line that
// starts with `|`. A `root` rule is required.
// Errors (InvalidArgument) read "LINE:COL: what is wrong", e.g.
// "4:9: undefined rule 'valu'", "1:12: unterminated string literal";
// left recursion and rules that can never complete are errors too.
// Threading: pure function. Tested by tests/grammar/gbnf_parser_test.cc;
// fuzzed by fuzz/gbnf_parser_fuzz.cc.
#pragma once

#include <string_view>

#include "core/status.h"
#include "grammar/grammar.h"

namespace met {

// Largest nesting of parentheses accepted.
inline constexpr int kMaxGbnfNesting = 64;

Result<Grammar> compile_gbnf(std::string_view text);

}  // namespace met
