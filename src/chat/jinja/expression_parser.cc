// Parser: expressions, in Jinja2's precedence order. Tested by
// tests/chat/parser_test.cc.
#include "chat/jinja/parser.h"

#include <algorithm>

namespace met::jinja {
namespace {

std::optional<CompareKind> compare_kind(const Token& t) {
  if (t.kind != TokenKind::kOperator) return std::nullopt;
  if (t.text == "==") return CompareKind::kEq;
  if (t.text == "!=") return CompareKind::kNe;
  if (t.text == "<") return CompareKind::kLt;
  if (t.text == "<=") return CompareKind::kLe;
  if (t.text == ">") return CompareKind::kGt;
  if (t.text == ">=") return CompareKind::kGe;
  return std::nullopt;
}

std::optional<ArithOp> multiplicative_op(const Token& t) {
  if (t.is_operator("*")) return ArithOp::kMul;
  if (t.is_operator("/")) return ArithOp::kDiv;
  if (t.is_operator("//")) return ArithOp::kFloorDiv;
  if (t.is_operator("%")) return ArithOp::kMod;
  return std::nullopt;
}

}  // namespace

Result<ExprPtr> Parser::parse_expression(bool with_condexpr) {
  MET_RETURN_IF_ERROR(enter());
  auto e = with_condexpr ? parse_conditional() : parse_or();
  leave();
  return e;
}

bool Parser::at_tuple_end(std::initializer_list<std::string_view> end_names) const {
  const Token& t = peek();
  if (t.kind == TokenKind::kVariableEnd || t.kind == TokenKind::kBlockEnd || t.kind == TokenKind::kEnd) {
    return true;
  }
  if (t.is_operator(")")) return true;
  return t.kind == TokenKind::kName &&
         std::find(end_names.begin(), end_names.end(), t.text) != end_names.end();
}

Result<ExprPtr> Parser::parse_tuple(bool with_condexpr, std::initializer_list<std::string_view> end_names,
                                    bool explicit_parentheses) {
  const SourceLoc at = peek().loc;
  std::vector<ExprPtr> items;
  bool is_tuple = false;
  while (true) {
    if (!items.empty()) MET_RETURN_IF_ERROR(expect_op(","));
    if (at_tuple_end(end_names)) break;
    MET_ASSIGN_OR_RETURN(ExprPtr item, parse_expression(with_condexpr));
    items.push_back(std::move(item));
    if (!peek().is_operator(",")) break;
    is_tuple = true;
  }
  if (!is_tuple) {
    if (!items.empty()) return std::move(items.front());
    if (!explicit_parentheses) return unexpected(peek(), "an expression");
  }
  return make_expr(at, node::List{std::move(items), /*is_tuple=*/true});
}

Result<ExprPtr> Parser::parse_conditional() {
  ChainDepth chain(*this);
  MET_ASSIGN_OR_RETURN(ExprPtr e, parse_or());
  while (peek().is_name("if")) {
    MET_RETURN_IF_ERROR(chain.deepen());
    const SourceLoc at = next().loc;
    node::Conditional c;
    MET_ASSIGN_OR_RETURN(c.condition, parse_or());
    if (accept_name("else")) {
      MET_ASSIGN_OR_RETURN(c.otherwise, parse_expression());
    }
    c.then = std::move(e);
    e = make_expr(at, std::move(c));
  }
  return e;
}

Result<ExprPtr> Parser::parse_or() {
  ChainDepth chain(*this);
  MET_ASSIGN_OR_RETURN(ExprPtr left, parse_and());
  while (peek().is_name("or")) {
    MET_RETURN_IF_ERROR(chain.deepen());
    const SourceLoc at = next().loc;
    MET_ASSIGN_OR_RETURN(ExprPtr right, parse_and());
    left = make_expr(at, node::Logical{false, std::move(left), std::move(right)});
  }
  return left;
}

Result<ExprPtr> Parser::parse_and() {
  ChainDepth chain(*this);
  MET_ASSIGN_OR_RETURN(ExprPtr left, parse_not());
  while (peek().is_name("and")) {
    MET_RETURN_IF_ERROR(chain.deepen());
    const SourceLoc at = next().loc;
    MET_ASSIGN_OR_RETURN(ExprPtr right, parse_not());
    left = make_expr(at, node::Logical{true, std::move(left), std::move(right)});
  }
  return left;
}

Result<ExprPtr> Parser::parse_not() {
  if (!peek().is_name("not")) return parse_compare();
  const SourceLoc at = next().loc;
  MET_RETURN_IF_ERROR(enter());
  auto operand = parse_not();
  leave();
  if (!operand.ok()) return operand.status();
  return make_expr(at, node::Unary{UnaryOp::kNot, std::move(operand).value()});
}

Result<ExprPtr> Parser::parse_compare() {
  const SourceLoc at = peek().loc;
  MET_ASSIGN_OR_RETURN(ExprPtr first, parse_additive());
  node::Compare c;
  while (true) {
    std::optional<CompareKind> kind = compare_kind(peek());
    if (kind) {
      next();
    } else if (peek().is_name("in")) {
      next();
      kind = CompareKind::kIn;
    } else if (peek().is_name("not") && peek(1).is_name("in")) {
      next();
      next();
      kind = CompareKind::kNotIn;
    } else {
      break;
    }
    MET_ASSIGN_OR_RETURN(ExprPtr right, parse_additive());
    c.steps.emplace_back(*kind, std::move(right));
  }
  if (c.steps.empty()) return first;
  c.first = std::move(first);
  return make_expr(at, std::move(c));
}

Result<ExprPtr> Parser::parse_additive() {
  ChainDepth chain(*this);
  MET_ASSIGN_OR_RETURN(ExprPtr left, parse_concat());
  while (peek().is_operator("+") || peek().is_operator("-")) {
    MET_RETURN_IF_ERROR(chain.deepen());
    const Token& op = next();
    const ArithOp kind = op.text == "+" ? ArithOp::kAdd : ArithOp::kSub;
    MET_ASSIGN_OR_RETURN(ExprPtr right, parse_concat());
    left = make_expr(op.loc, node::Arith{kind, std::move(left), std::move(right)});
  }
  return left;
}

Result<ExprPtr> Parser::parse_concat() {
  const SourceLoc at = peek().loc;
  MET_ASSIGN_OR_RETURN(ExprPtr first, parse_multiplicative());
  if (!peek().is_operator("~")) return first;
  node::Concat c;
  c.parts.push_back(std::move(first));
  while (accept_op("~")) {
    MET_ASSIGN_OR_RETURN(ExprPtr part, parse_multiplicative());
    c.parts.push_back(std::move(part));
  }
  return make_expr(at, std::move(c));
}

Result<ExprPtr> Parser::parse_multiplicative() {
  ChainDepth chain(*this);
  MET_ASSIGN_OR_RETURN(ExprPtr left, parse_power());
  while (std::optional<ArithOp> op = multiplicative_op(peek())) {
    MET_RETURN_IF_ERROR(chain.deepen());
    const SourceLoc at = next().loc;
    MET_ASSIGN_OR_RETURN(ExprPtr right, parse_power());
    left = make_expr(at, node::Arith{*op, std::move(left), std::move(right)});
  }
  return left;
}

Result<ExprPtr> Parser::parse_power() {
  ChainDepth chain(*this);
  MET_ASSIGN_OR_RETURN(ExprPtr left, parse_unary(true));
  while (peek().is_operator("**")) {
    MET_RETURN_IF_ERROR(chain.deepen());
    const SourceLoc at = next().loc;
    MET_ASSIGN_OR_RETURN(ExprPtr right, parse_unary(true));
    left = make_expr(at, node::Arith{ArithOp::kPow, std::move(left), std::move(right)});
  }
  return left;
}

Result<ExprPtr> Parser::parse_unary(bool with_filter) {
  MET_RETURN_IF_ERROR(enter());
  auto e = parse_unary_operand(with_filter);
  leave();
  return e;
}

Result<ExprPtr> Parser::parse_unary_operand(bool with_filter) {
  ExprPtr e;
  if (peek().is_operator("-") || peek().is_operator("+")) {
    const Token& op = next();
    const UnaryOp kind = op.text == "-" ? UnaryOp::kNeg : UnaryOp::kPos;
    MET_ASSIGN_OR_RETURN(ExprPtr operand, parse_unary(false));
    e = make_expr(op.loc, node::Unary{kind, std::move(operand)});
  } else {
    MET_ASSIGN_OR_RETURN(e, parse_primary());
  }
  MET_ASSIGN_OR_RETURN(e, parse_postfix(std::move(e)));
  if (with_filter) {
    MET_ASSIGN_OR_RETURN(e, parse_filters_and_tests(std::move(e)));
  }
  return e;
}

Result<ExprPtr> Parser::parse_literal_token() {
  const Token& t = next();
  switch (t.kind) {
    case TokenKind::kInteger:
      return make_expr(t.loc, node::Literal{Value::integer(t.int_value)});
    case TokenKind::kFloat:
      return make_expr(t.loc, node::Literal{Value::floating(t.float_value)});
    case TokenKind::kString: {
      std::string s = t.text;
      while (peek().kind == TokenKind::kString) s += next().text;  // 'a' 'b' is 'ab'
      program_.strings.push_back(std::move(s));
      return make_expr(t.loc, node::Literal{Value::string(&program_.strings.back())});
    }
    case TokenKind::kName:
    case TokenKind::kText:
    case TokenKind::kVariableBegin:
    case TokenKind::kVariableEnd:
    case TokenKind::kBlockBegin:
    case TokenKind::kBlockEnd:
    case TokenKind::kOperator:
    case TokenKind::kEnd:
      break;
  }
  return unexpected(t, "a literal");
}

Result<ExprPtr> Parser::parse_primary() {
  const Token& t = peek();
  if (t.kind == TokenKind::kName) {
    next();
    if (t.text == "true" || t.text == "True") return make_expr(t.loc, node::Literal{Value::boolean(true)});
    if (t.text == "false" || t.text == "False") return make_expr(t.loc, node::Literal{Value::boolean(false)});
    if (t.text == "none" || t.text == "None") return make_expr(t.loc, node::Literal{Value::none()});
    return make_expr(t.loc, node::Name{t.text});
  }
  if (t.kind == TokenKind::kString || t.kind == TokenKind::kInteger || t.kind == TokenKind::kFloat) {
    return parse_literal_token();
  }
  if (t.is_operator("(")) {
    next();
    MET_ASSIGN_OR_RETURN(ExprPtr e, parse_tuple(true, {}, true));
    MET_RETURN_IF_ERROR(expect_op(")"));
    return e;
  }
  if (t.is_operator("[")) return parse_list(next().loc);
  if (t.is_operator("{")) return parse_dict(next().loc);
  return unexpected(t, "an expression");
}

Result<ExprPtr> Parser::parse_list(SourceLoc at) {
  node::List l;
  while (!accept_op("]")) {
    if (!l.items.empty()) MET_RETURN_IF_ERROR(expect_op(","));
    if (accept_op("]")) break;
    MET_ASSIGN_OR_RETURN(ExprPtr item, parse_expression());
    l.items.push_back(std::move(item));
  }
  return make_expr(at, std::move(l));
}

Result<ExprPtr> Parser::parse_dict(SourceLoc at) {
  node::Dict d;
  while (!accept_op("}")) {
    if (!d.items.empty()) MET_RETURN_IF_ERROR(expect_op(","));
    if (accept_op("}")) break;
    MET_ASSIGN_OR_RETURN(ExprPtr key, parse_expression());
    MET_RETURN_IF_ERROR(expect_op(":"));
    MET_ASSIGN_OR_RETURN(ExprPtr value, parse_expression());
    d.items.emplace_back(std::move(key), std::move(value));
  }
  return make_expr(at, std::move(d));
}

Result<ExprPtr> Parser::parse_postfix(ExprPtr e) {
  ChainDepth chain(*this);
  const SourceLoc at = e->loc;  // errors point at the start of the chain
  while (true) {
    MET_RETURN_IF_ERROR(chain.deepen());
    const Token& t = peek();
    if (t.is_operator(".")) {
      next();
      if (peek().kind == TokenKind::kInteger) {
        const Token& index = next();
        ExprPtr key = make_expr(index.loc, node::Literal{Value::integer(index.int_value)});
        e = make_expr(at, node::Item{std::move(e), std::move(key)});
        continue;
      }
      MET_ASSIGN_OR_RETURN(std::string name, expect_name());
      e = make_expr(at, node::Attribute{std::move(e), std::move(name)});
    } else if (t.is_operator("[")) {
      next();
      MET_ASSIGN_OR_RETURN(e, parse_subscript(std::move(e), at));
    } else if (t.is_operator("(")) {
      next();
      MET_ASSIGN_OR_RETURN(std::vector<Arg> args, parse_call_args());
      e = make_expr(at, node::Call{std::move(e), std::move(args)});
    } else {
      return e;
    }
  }
}

Result<ExprPtr> Parser::parse_subscript(ExprPtr object, SourceLoc at) {
  ExprPtr parts[3];
  int colons = 0;
  while (!peek().is_operator("]")) {
    if (peek().is_operator(":")) {
      next();
      if (++colons > 2) return unexpected(peek(), "']'");
      continue;
    }
    if (parts[colons]) return unexpected(peek(), colons == 0 ? "']' or ':'" : "']'");
    MET_ASSIGN_OR_RETURN(parts[colons], parse_expression());
  }
  next();
  if (colons == 0) {
    if (!parts[0]) return unexpected(peek(), "an index");
    return make_expr(at, node::Item{std::move(object), std::move(parts[0])});
  }
  return make_expr(at, node::Slice{std::move(object), std::move(parts[0]), std::move(parts[1]),
                                   std::move(parts[2])});
}

Result<std::vector<Arg>> Parser::parse_call_args() {
  std::vector<Arg> args;
  while (!accept_op(")")) {
    if (!args.empty()) MET_RETURN_IF_ERROR(expect_op(","));
    if (accept_op(")")) break;
    if (peek().is_operator("*") || peek().is_operator("**")) {
      return syntax_error(peek().loc, "*args and **kwargs in calls are not supported");
    }
    Arg a;
    if (peek().kind == TokenKind::kName && peek(1).is_operator("=")) {
      a.name = next().text;
      next();
    }
    MET_ASSIGN_OR_RETURN(a.value, parse_expression());
    args.push_back(std::move(a));
  }
  return args;
}

Result<std::string> Parser::parse_dotted_name() {
  MET_ASSIGN_OR_RETURN(std::string name, expect_name());
  while (peek().is_operator(".") && peek(1).kind == TokenKind::kName) {
    next();
    name += "." + next().text;
  }
  return name;
}

Result<ExprPtr> Parser::parse_filters_and_tests(ExprPtr e) {
  ChainDepth chain(*this);
  while (true) {
    MET_RETURN_IF_ERROR(chain.deepen());
    const Token& t = peek();
    if (t.is_operator("|")) {
      next();
      MET_ASSIGN_OR_RETURN(e, parse_filter(std::move(e), t.loc));
    } else if (t.is_name("is")) {
      next();
      MET_ASSIGN_OR_RETURN(e, parse_test(std::move(e), t.loc));
    } else if (t.is_operator("(")) {
      next();
      MET_ASSIGN_OR_RETURN(std::vector<Arg> args, parse_call_args());
      e = make_expr(t.loc, node::Call{std::move(e), std::move(args)});
    } else {
      return e;
    }
  }
}

Result<ExprPtr> Parser::parse_filter(ExprPtr input, SourceLoc at) {
  node::Filter f;
  f.input = std::move(input);
  MET_ASSIGN_OR_RETURN(f.name, parse_dotted_name());
  if (accept_op("(")) {
    MET_ASSIGN_OR_RETURN(f.args, parse_call_args());
  }
  return make_expr(at, std::move(f));
}

Result<ExprPtr> Parser::parse_filter_chain() {
  ChainDepth chain(*this);
  MET_ASSIGN_OR_RETURN(ExprPtr e, parse_filter(nullptr, peek().loc));
  while (peek().is_operator("|")) {
    MET_RETURN_IF_ERROR(chain.deepen());
    const SourceLoc at = next().loc;
    MET_ASSIGN_OR_RETURN(e, parse_filter(std::move(e), at));
  }
  return e;
}

Result<ExprPtr> Parser::parse_test(ExprPtr input, SourceLoc at) {
  node::Test t;
  t.input = std::move(input);
  t.negated = accept_name("not");
  MET_ASSIGN_OR_RETURN(t.name, parse_dotted_name());
  const Token& p = peek();
  if (accept_op("(")) {
    MET_ASSIGN_OR_RETURN(t.args, parse_call_args());
  } else if ((p.kind == TokenKind::kName || p.kind == TokenKind::kString || p.kind == TokenKind::kInteger ||
              p.kind == TokenKind::kFloat || p.is_operator("[") || p.is_operator("{")) &&
             !p.is_name("else") && !p.is_name("or") && !p.is_name("and")) {
    if (p.is_name("is")) return syntax_error(p.loc, "you cannot chain multiple tests with is");
    MET_RETURN_IF_ERROR(enter());
    auto arg = parse_primary();
    if (arg.ok()) arg = parse_postfix(std::move(arg).value());
    leave();
    if (!arg.ok()) return arg.status();
    t.args.push_back(Arg{"", std::move(arg).value()});
  }
  return make_expr(at, std::move(t));
}

}  // namespace met::jinja
