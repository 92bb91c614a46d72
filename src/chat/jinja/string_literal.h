// decode_string_literal: the value of a quoted string in a template, decoded
// as Jinja2 does (Python's "unicode-escape": \n, \t, \\, \', \", \xHH, \uXXXX,
// \UXXXXXXXX, octal, backslash-newline continuation; an unknown escape keeps
// its backslash). Non-ASCII text passes through as UTF-8.
// Threading: pure function. Tested by tests/chat/lexer_test.cc.
#pragma once

#include <string>
#include <string_view>

namespace met::jinja {

// `body` is the text between the quotes.
std::string decode_string_literal(std::string_view body);

}  // namespace met::jinja
