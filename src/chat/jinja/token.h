// Token: one lexeme of a template: a run of literal text, the delimiters of
// `{{ … }}` and `{% … %}`, or an expression token (name, string, integer,
// float, operator) between them. Comments and whitespace control are resolved
// by the lexer and never reach the parser.
// Threading: plain values. Tested by tests/chat/lexer_test.cc.
#pragma once

#include <cstdint>
#include <string>

#include "chat/jinja/errors.h"

namespace met::jinja {

enum class TokenKind : uint8_t {
  kText,
  kVariableBegin,  // {{
  kVariableEnd,    // }}
  kBlockBegin,     // {%
  kBlockEnd,       // %}
  kName,
  kString,
  kInteger,
  kFloat,
  kOperator,
  kEnd,  // end of the template
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;  // the text, name, decoded string or operator symbol
  int64_t int_value = 0;
  double float_value = 0.0;
  SourceLoc loc;

  bool is_operator(std::string_view op) const { return kind == TokenKind::kOperator && text == op; }
  bool is_name(std::string_view name) const { return kind == TokenKind::kName && text == name; }
};

}  // namespace met::jinja
