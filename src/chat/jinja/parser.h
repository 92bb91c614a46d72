// Parser: builds a Program from template source by recursive descent, with
// Jinja2's grammar and operator precedence (conditional < or < and < not <
// comparisons and `in` < + - < ~ < * / // % < ** < unary - + < filters `|`,
// tests `is`, calls, attribute and item access). Statements: if/elif/else,
// for (unpacking, `if` filter, else), set (incl. block set and ns.attr), macro,
// call, filter, with, generation, break, continue; raw and comments are
// resolved by the lexer.
// Invariants: nesting deeper than kMaxNesting is a syntax error, so neither the
// parser nor the interpreter can exhaust the stack; every error names the line
// and column of the offending token.
// Threading: one Parser per parse. Tested by tests/chat/parser_test.cc.
#pragma once

#include <initializer_list>
#include <memory>
#include <string_view>
#include <vector>

#include "chat/jinja/ast.h"
#include "chat/jinja/token.h"
#include "core/status.h"

namespace met::jinja {

class Parser {
 public:
  static constexpr int kMaxNesting = 200;

  static Result<std::unique_ptr<Program>> parse(std::string_view source);

 private:
  Parser(std::vector<Token> tokens, Program& program) : tokens_(std::move(tokens)), program_(program) {}

  // Token stream.
  const Token& peek(size_t ahead = 0) const;
  const Token& next();
  bool accept_op(std::string_view op);
  bool accept_name(std::string_view name);
  Status expect_op(std::string_view op);
  Result<std::string> expect_name();
  Status expect_block_end();
  Status unexpected(const Token& t, std::string_view wanted) const;
  // Guards recursion; pair with leave().
  Status enter();
  void leave() { --depth_; }
  // Nesting added by a loop that builds a left-deep tree (a + b + c, x.a.b,
  // x|f|g), given back when the parsing function returns: the tree's depth
  // counts against kMaxNesting like recursion does.
  class ChainDepth {
   public:
    explicit ChainDepth(Parser& parser) : parser_(parser) {}
    ~ChainDepth() { parser_.depth_ -= added_; }
    ChainDepth(const ChainDepth&) = delete;
    ChainDepth& operator=(const ChainDepth&) = delete;
    Status deepen() {
      MET_RETURN_IF_ERROR(parser_.enter());
      ++added_;
      return ok_status();
    }

   private:
    Parser& parser_;
    int added_ = 0;
  };

  // Statements (parser.cc).
  Result<Body> parse_body(std::initializer_list<std::string_view> end_tags);
  Result<StmtPtr> parse_statement();
  Result<StmtPtr> parse_tag(const Token& tag);
  Result<StmtPtr> parse_if(SourceLoc at);
  Result<StmtPtr> parse_for(SourceLoc at);
  Result<StmtPtr> parse_set(SourceLoc at);
  Result<StmtPtr> parse_macro(SourceLoc at);
  Result<StmtPtr> parse_call_block(SourceLoc at);
  Result<StmtPtr> parse_filter_block(SourceLoc at);
  Result<StmtPtr> parse_with(SourceLoc at);
  Result<StmtPtr> parse_generation(SourceLoc at);
  Result<StmtPtr> parse_loop_control(SourceLoc at, bool is_break);
  Result<std::vector<Param>> parse_params();
  Result<std::vector<std::string>> parse_targets();
  // Consumes `{% end_tag %}`, which parse_body stopped before.
  Status expect_end_tag(std::string_view end_tag);
  // The tag parse_body stopped at (the name after `{%`).
  std::string_view pending_tag() const;

  // Expressions (expression_parser.cc).
  Result<ExprPtr> parse_expression(bool with_condexpr = true);
  Result<ExprPtr> parse_tuple(bool with_condexpr, std::initializer_list<std::string_view> end_names,
                              bool explicit_parentheses);
  Result<ExprPtr> parse_conditional();
  Result<ExprPtr> parse_or();
  Result<ExprPtr> parse_and();
  Result<ExprPtr> parse_not();
  Result<ExprPtr> parse_compare();
  Result<ExprPtr> parse_additive();
  Result<ExprPtr> parse_concat();
  Result<ExprPtr> parse_multiplicative();
  Result<ExprPtr> parse_power();
  Result<ExprPtr> parse_unary(bool with_filter);
  Result<ExprPtr> parse_unary_operand(bool with_filter);
  Result<ExprPtr> parse_primary();
  Result<ExprPtr> parse_literal_token();
  Result<ExprPtr> parse_list(SourceLoc at);
  Result<ExprPtr> parse_dict(SourceLoc at);
  Result<ExprPtr> parse_postfix(ExprPtr node);
  Result<ExprPtr> parse_subscript(ExprPtr node, SourceLoc at);
  Result<ExprPtr> parse_filters_and_tests(ExprPtr node);
  // `|name(args)`, the bar already consumed; `input` may be null.
  Result<ExprPtr> parse_filter(ExprPtr input, SourceLoc at);
  // A chain `name(args)|name2…` with a null innermost input (filter blocks).
  Result<ExprPtr> parse_filter_chain();
  Result<ExprPtr> parse_test(ExprPtr input, SourceLoc at);
  Result<std::vector<Arg>> parse_call_args();
  Result<std::string> parse_dotted_name();
  bool at_tuple_end(std::initializer_list<std::string_view> end_names) const;

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;  // break/continue are legal only inside a for body
  Program& program_;
};

}  // namespace met::jinja
