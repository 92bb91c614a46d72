// The lexer: token kinds, whitespace control applied to text, string
// decoding, and errors that name the line and column.
#include "chat/jinja/lexer.h"

#include <gtest/gtest.h>

namespace met::jinja {
namespace {

std::vector<Token> lex(std::string_view source) {
  auto tokens = tokenize(source);
  EXPECT_TRUE(tokens.ok()) << tokens.status().message();
  return tokens.ok() ? std::move(tokens).value() : std::vector<Token>{};
}

std::string kinds(const std::vector<Token>& tokens) {
  std::string out;
  for (const Token& t : tokens) {
    switch (t.kind) {
      case TokenKind::kText: out += "T"; break;
      case TokenKind::kVariableBegin: out += "{{"; break;
      case TokenKind::kVariableEnd: out += "}}"; break;
      case TokenKind::kBlockBegin: out += "{%"; break;
      case TokenKind::kBlockEnd: out += "%}"; break;
      case TokenKind::kName: out += "n"; break;
      case TokenKind::kString: out += "s"; break;
      case TokenKind::kInteger: out += "i"; break;
      case TokenKind::kFloat: out += "f"; break;
      case TokenKind::kOperator: out += "o"; break;
      case TokenKind::kEnd: out += "$"; break;
    }
  }
  return out;
}

TEST(Lexer, SplitsTextTagsAndExpressionTokens) {
  const auto tokens = lex("a{{ x.y|f(1, 2.5, 'q') }}b{% if n >= 3 %}c{% endif %}");
  EXPECT_EQ(kinds(tokens), "T{{nononoiofoso}}T{%nnoi%}T{%n%}$");
}

TEST(Lexer, ReadsNumbersLikeJinja) {
  const auto tokens = lex("{{ 1_000 1.5e3 2e-2 7 a.0 }}");
  ASSERT_EQ(tokens.size(), 10u);
  EXPECT_EQ(tokens[1].int_value, 1000);
  EXPECT_DOUBLE_EQ(tokens[2].float_value, 1500.0);
  EXPECT_DOUBLE_EQ(tokens[3].float_value, 0.02);
  EXPECT_EQ(tokens[4].int_value, 7);
  EXPECT_EQ(tokens[7].kind, TokenKind::kInteger);  // `a.0` is an item access, not a float
}

TEST(Lexer, DecodesStringEscapes) {
  const auto tokens = lex(R"({{ 'a\n\t\'b' "\u00e9\x41\101" 'keep \d' }})");
  ASSERT_EQ(tokens.size(), 6u);
  EXPECT_EQ(tokens[1].text, "a\n\t'b");
  EXPECT_EQ(tokens[2].text, "\xC3\xA9" "AA");
  EXPECT_EQ(tokens[3].text, "keep \\d");
}

TEST(Lexer, TwoCharacterOperatorsWin) {
  const auto tokens = lex("{{ a // b ** c == d != e <= f >= g }}");
  std::vector<std::string> ops;
  for (const Token& t : tokens) {
    if (t.kind == TokenKind::kOperator) ops.push_back(t.text);
  }
  EXPECT_EQ(ops, (std::vector<std::string>{"//", "**", "==", "!=", "<=", ">="}));
}

TEST(Lexer, ClosingBracesInsideADictDoNotEndTheTag) {
  EXPECT_EQ(kinds(lex("{{ {'a': {'b': 1}} }}")), "{{osoosoioo}}$");
}

TEST(Lexer, AppliesWhitespaceControlToText) {
  const auto tokens = lex("a \n {%- if x -%} \n b\n  {% endif %}\nc");
  ASSERT_EQ(tokens[0].kind, TokenKind::kText);
  EXPECT_EQ(tokens[0].text, "a");
  EXPECT_EQ(tokens[5].text, "b\n");  // -%} ate the leading whitespace; lstrip the indent
  EXPECT_EQ(tokens.back().kind, TokenKind::kEnd);
  EXPECT_EQ(tokens[tokens.size() - 2].text, "c");  // trim_blocks ate the newline
}

TEST(Lexer, DropsCommentsAndKeepsRawBlocks) {
  const auto tokens = lex("x{# gone #}y{% raw %}{{ kept }}{% endraw %}");
  ASSERT_EQ(tokens.size(), 4u);
  EXPECT_EQ(tokens[0].text, "x");
  EXPECT_EQ(tokens[1].text, "y");
  EXPECT_EQ(tokens[2].text, "{{ kept }}");
}

TEST(Lexer, RecordsLineAndColumn) {
  const auto tokens = lex("ab\n  {{ x }}");
  ASSERT_GE(tokens.size(), 3u);
  EXPECT_EQ(tokens[1].loc.line, 2u);
  EXPECT_EQ(tokens[1].loc.column, 3u);
  EXPECT_EQ(tokens[2].loc.column, 6u);
}

TEST(Lexer, ErrorsNameLineAndColumn) {
  struct Case {
    std::string_view source;
    std::string_view message;
  };
  const Case cases[] = {
      {"a\n{{ 'open }}", "TemplateSyntaxError: unterminated string literal (line 2, column 4)"},
      {"{# never closed", "TemplateSyntaxError: unclosed comment (line 1, column 1)"},
      {"x\n\n {{ a", "TemplateSyntaxError: unexpected end of template: this tag is not closed (line 3, column 2)"},
      {"{{ a ? b }}", "TemplateSyntaxError: unexpected character '?' (line 1, column 6)"},
      {"{% raw %}no end", "TemplateSyntaxError: missing endraw for this raw block (line 1, column 1)"},
      {"{{ 99999999999999999999 }}", "TemplateSyntaxError: integer literal 99999999999999999999 does not fit 64 bits"},
  };
  for (const Case& c : cases) {
    auto r = tokenize(c.source);
    ASSERT_FALSE(r.ok()) << c.source;
    EXPECT_TRUE(r.status().message().starts_with(c.message)) << r.status().message();
  }
}

}  // namespace
}  // namespace met::jinja
