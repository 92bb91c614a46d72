// The lexer: turns template source into Tokens the way Jinja2's lexer does
// with Hugging Face's settings: trim_blocks (the first newline after a block
// or comment tag is dropped), lstrip_blocks (spaces and tabs before a block or
// comment tag on its own line are dropped), `-` and `+` whitespace control on
// every tag, `{% raw %}` blocks, newlines normalized to "\n", and one trailing
// newline of the template dropped (keep_trailing_newline off).
// Invariants: the token list ends with exactly one kEnd; every token between a
// begin and its end delimiter is an expression token; errors name the line
// and column.
// Threading: pure function. Tested by tests/chat/lexer_test.cc.
#pragma once

#include <string_view>
#include <vector>

#include "chat/jinja/token.h"
#include "core/status.h"

namespace met::jinja {

Result<std::vector<Token>> tokenize(std::string_view source);

}  // namespace met::jinja
