// Parser: the token stream and statements. Expressions are in
// expression_parser.cc. Tested by tests/chat/parser_test.cc.
#include "chat/jinja/parser.h"

#include <algorithm>

#include "chat/jinja/lexer.h"

namespace met::jinja {
namespace {

bool contains_closure(const Body& body);

bool stmt_contains_closure(const Stmt& s) {
  return std::visit(
      [](const auto& n) -> bool {
        using N = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<N, node::Macro> || std::is_same_v<N, node::CallBlock>) {
          return true;
        } else if constexpr (std::is_same_v<N, node::If>) {
          return std::any_of(n.branches.begin(), n.branches.end(),
                             [](const auto& b) { return contains_closure(b.second); }) ||
                 contains_closure(n.otherwise);
        } else if constexpr (std::is_same_v<N, node::For>) {
          return contains_closure(n.body) || contains_closure(n.otherwise);
        } else if constexpr (std::is_same_v<N, node::Set> || std::is_same_v<N, node::FilterBlock> ||
                             std::is_same_v<N, node::With> || std::is_same_v<N, node::Generation>) {
          return contains_closure(n.body);
        } else {
          return false;
        }
      },
      s.node);
}

// Whether a frame running `body` may be captured by a macro or caller.
bool contains_closure(const Body& body) {
  return std::any_of(body.begin(), body.end(), [](const StmtPtr& s) { return stmt_contains_closure(*s); });
}

std::string describe(const Token& t) {
  switch (t.kind) {
    case TokenKind::kText: return "text";
    case TokenKind::kVariableBegin: return "'{{'";
    case TokenKind::kVariableEnd: return "'}}'";
    case TokenKind::kBlockBegin: return "'{%'";
    case TokenKind::kBlockEnd: return "'%}'";
    case TokenKind::kString: return "a string";
    case TokenKind::kInteger:
    case TokenKind::kFloat: return "'" + t.text + "'";
    case TokenKind::kName:
    case TokenKind::kOperator: return "'" + t.text + "'";
    case TokenKind::kEnd: return "the end of the template";
  }
  return "a token";
}

}  // namespace

Result<std::unique_ptr<Program>> Parser::parse(std::string_view source) {
  MET_ASSIGN_OR_RETURN(std::vector<Token> tokens, tokenize(source));
  auto program = std::make_unique<Program>();
  Parser parser(std::move(tokens), *program);
  MET_ASSIGN_OR_RETURN(program->body, parser.parse_body({}));
  if (parser.peek().kind != TokenKind::kEnd) {
    return syntax_error(parser.peek(1).loc, "unexpected '{}'", parser.pending_tag());
  }
  return program;
}

const Token& Parser::peek(size_t ahead) const {
  return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
}

const Token& Parser::next() {
  const Token& t = peek();
  if (pos_ < tokens_.size() - 1) ++pos_;
  return t;
}

bool Parser::accept_op(std::string_view op) {
  if (!peek().is_operator(op)) return false;
  next();
  return true;
}

bool Parser::accept_name(std::string_view name) {
  if (!peek().is_name(name)) return false;
  next();
  return true;
}

Status Parser::unexpected(const Token& t, std::string_view wanted) const {
  return syntax_error(t.loc, "expected {}, got {}", wanted, describe(t));
}

Status Parser::expect_op(std::string_view op) {
  if (accept_op(op)) return ok_status();
  return unexpected(peek(), "'" + std::string(op) + "'");
}

Result<std::string> Parser::expect_name() {
  if (peek().kind != TokenKind::kName) return unexpected(peek(), "a name");
  return next().text;
}

Status Parser::expect_block_end() {
  if (peek().kind == TokenKind::kBlockEnd) {
    next();
    return ok_status();
  }
  return unexpected(peek(), "'%}'");
}

Status Parser::enter() {
  if (++depth_ > kMaxNesting) {
    --depth_;
    return syntax_error(peek().loc, "the template nests deeper than {} levels", kMaxNesting);
  }
  return ok_status();
}

std::string_view Parser::pending_tag() const {
  return peek().kind == TokenKind::kBlockBegin && peek(1).kind == TokenKind::kName
             ? std::string_view(peek(1).text)
             : std::string_view(peek().text);
}

Result<Body> Parser::parse_body(std::initializer_list<std::string_view> end_tags) {
  MET_RETURN_IF_ERROR(enter());
  Body body;
  while (true) {
    const Token& t = peek();
    if (t.kind == TokenKind::kEnd) {
      if (end_tags.size() == 0) break;
      leave();
      const auto closing = std::find_if(end_tags.begin(), end_tags.end(),
                                        [](std::string_view tag) { return tag.starts_with("end"); });
      return syntax_error(t.loc, "unexpected end of template, expected '{}'",
                          closing != end_tags.end() ? *closing : *end_tags.begin());
    }
    if (t.kind == TokenKind::kBlockBegin && peek(1).kind == TokenKind::kName &&
        std::find(end_tags.begin(), end_tags.end(), peek(1).text) != end_tags.end()) {
      break;
    }
    auto stmt = parse_statement();
    if (!stmt.ok()) {
      leave();
      return stmt.status();
    }
    body.push_back(std::move(stmt).value());
  }
  leave();
  return body;
}

Result<StmtPtr> Parser::parse_statement() {
  const Token& t = next();
  switch (t.kind) {
    case TokenKind::kText:
      return make_stmt(t.loc, node::Text{t.text});
    case TokenKind::kVariableBegin: {
      MET_ASSIGN_OR_RETURN(ExprPtr e, parse_tuple(true, {}, false));
      if (peek().kind != TokenKind::kVariableEnd) return unexpected(peek(), "'}}'");
      next();
      return make_stmt(t.loc, node::Output{std::move(e)});
    }
    case TokenKind::kBlockBegin:
      return parse_tag(t);
    case TokenKind::kVariableEnd:
    case TokenKind::kBlockEnd:
    case TokenKind::kName:
    case TokenKind::kString:
    case TokenKind::kInteger:
    case TokenKind::kFloat:
    case TokenKind::kOperator:
    case TokenKind::kEnd:
      break;
  }
  return syntax_error(t.loc, "unexpected {}", describe(t));
}

Result<StmtPtr> Parser::parse_tag(const Token& tag) {
  if (peek().kind != TokenKind::kName) return unexpected(peek(), "a tag name");
  const Token& name = next();
  const SourceLoc at = tag.loc;
  const std::string& n = name.text;
  if (n == "if") return parse_if(at);
  if (n == "for") return parse_for(at);
  if (n == "set") return parse_set(at);
  if (n == "macro") return parse_macro(at);
  if (n == "call") return parse_call_block(at);
  if (n == "filter") return parse_filter_block(at);
  if (n == "with") return parse_with(at);
  if (n == "generation") return parse_generation(at);
  if (n == "break" || n == "continue") return parse_loop_control(at, n == "break");
  static constexpr std::string_view kUnsupported[] = {"include", "import", "from", "extends", "block",
                                                      "do", "autoescape", "trans"};
  if (std::find(std::begin(kUnsupported), std::end(kUnsupported), n) != std::end(kUnsupported)) {
    return syntax_error(name.loc, "the '{}' tag is not supported in chat templates", n);
  }
  return syntax_error(name.loc, "unknown tag '{}'", n);
}

Status Parser::expect_end_tag(std::string_view end_tag) {
  if (peek().kind != TokenKind::kBlockBegin || !peek(1).is_name(end_tag)) {
    return unexpected(peek(1), "'" + std::string(end_tag) + "'");
  }
  next();
  next();
  return expect_block_end();
}

Result<StmtPtr> Parser::parse_if(SourceLoc at) {
  node::If n;
  while (true) {
    MET_ASSIGN_OR_RETURN(ExprPtr cond, parse_tuple(false, {}, false));
    MET_RETURN_IF_ERROR(expect_block_end());
    MET_ASSIGN_OR_RETURN(Body body, parse_body({"elif", "else", "endif"}));
    n.branches.emplace_back(std::move(cond), std::move(body));
    next();  // {%
    const std::string tag = next().text;
    if (tag == "elif") continue;
    if (tag == "else") {
      MET_RETURN_IF_ERROR(expect_block_end());
      MET_ASSIGN_OR_RETURN(n.otherwise, parse_body({"endif"}));
      MET_RETURN_IF_ERROR(expect_end_tag("endif"));
    } else {
      MET_RETURN_IF_ERROR(expect_block_end());
    }
    return make_stmt(at, std::move(n));
  }
}

Result<std::vector<std::string>> Parser::parse_targets() {
  std::vector<std::string> names;
  const bool parenthesized = accept_op("(");
  do {
    MET_ASSIGN_OR_RETURN(std::string name, expect_name());
    names.push_back(std::move(name));
  } while (accept_op(",") && peek().kind == TokenKind::kName && !peek().is_name("in"));
  if (parenthesized) MET_RETURN_IF_ERROR(expect_op(")"));
  return names;
}

Result<StmtPtr> Parser::parse_for(SourceLoc at) {
  node::For n;
  MET_ASSIGN_OR_RETURN(n.targets, parse_targets());
  if (!accept_name("in")) return unexpected(peek(), "'in'");
  MET_ASSIGN_OR_RETURN(n.iterable, parse_tuple(false, {"recursive"}, false));
  if (accept_name("if")) {
    MET_ASSIGN_OR_RETURN(n.filter, parse_expression());
  }
  if (peek().is_name("recursive")) {
    return syntax_error(peek().loc, "recursive for loops are not supported");
  }
  MET_RETURN_IF_ERROR(expect_block_end());
  ++loop_depth_;
  auto body = parse_body({"endfor", "else"});
  --loop_depth_;
  if (!body.ok()) return body.status();
  n.body = std::move(body).value();
  if (pending_tag() == "else") {
    next();
    next();
    MET_RETURN_IF_ERROR(expect_block_end());
    MET_ASSIGN_OR_RETURN(n.otherwise, parse_body({"endfor"}));
  }
  MET_RETURN_IF_ERROR(expect_end_tag("endfor"));
  n.body_captures = contains_closure(n.body) || contains_closure(n.otherwise);
  return make_stmt(at, std::move(n));
}

Result<StmtPtr> Parser::parse_set(SourceLoc at) {
  node::Set n;
  MET_ASSIGN_OR_RETURN(n.targets, parse_targets());
  if (n.targets.size() == 1 && accept_op(".")) {
    MET_ASSIGN_OR_RETURN(n.attribute, expect_name());
  }
  if (accept_op("=")) {
    MET_ASSIGN_OR_RETURN(n.value, parse_tuple(true, {}, false));
    MET_RETURN_IF_ERROR(expect_block_end());
    return make_stmt(at, std::move(n));
  }
  if (n.targets.size() != 1) return unexpected(peek(), "'='");
  if (accept_op("|")) {
    MET_ASSIGN_OR_RETURN(n.filter, parse_filter_chain());
  }
  MET_RETURN_IF_ERROR(expect_block_end());
  MET_ASSIGN_OR_RETURN(n.body, parse_body({"endset"}));
  MET_RETURN_IF_ERROR(expect_end_tag("endset"));
  return make_stmt(at, std::move(n));
}

Result<std::vector<Param>> Parser::parse_params() {
  std::vector<Param> params;
  MET_RETURN_IF_ERROR(expect_op("("));
  while (!accept_op(")")) {
    if (!params.empty()) MET_RETURN_IF_ERROR(expect_op(","));
    if (accept_op(")")) break;
    Param p;
    MET_ASSIGN_OR_RETURN(p.name, expect_name());
    if (accept_op("=")) {
      MET_ASSIGN_OR_RETURN(p.default_value, parse_expression());
    }
    params.push_back(std::move(p));
  }
  return params;
}

Result<StmtPtr> Parser::parse_macro(SourceLoc at) {
  auto def = std::make_unique<MacroDef>();
  MET_ASSIGN_OR_RETURN(def->name, expect_name());
  MET_ASSIGN_OR_RETURN(def->params, parse_params());
  MET_RETURN_IF_ERROR(expect_block_end());
  const int saved_loop_depth = loop_depth_;
  loop_depth_ = 0;
  auto body = parse_body({"endmacro"});
  loop_depth_ = saved_loop_depth;
  if (!body.ok()) return body.status();
  def->body = std::move(body).value();
  MET_RETURN_IF_ERROR(expect_end_tag("endmacro"));
  def->body_captures = contains_closure(def->body);
  return make_stmt(at, node::Macro{std::move(def)});
}

Result<StmtPtr> Parser::parse_call_block(SourceLoc at) {
  auto def = std::make_unique<MacroDef>();
  def->name = "caller";
  if (peek().is_operator("(")) {
    MET_ASSIGN_OR_RETURN(def->params, parse_params());
  }
  const SourceLoc call_at = peek().loc;
  MET_ASSIGN_OR_RETURN(ExprPtr call, parse_expression());
  if (!std::holds_alternative<node::Call>(call->node)) {
    return syntax_error(call_at, "a call block needs a macro call, such as {{% call m() %}}");
  }
  MET_RETURN_IF_ERROR(expect_block_end());
  const int saved_loop_depth = loop_depth_;
  loop_depth_ = 0;
  auto body = parse_body({"endcall"});
  loop_depth_ = saved_loop_depth;
  if (!body.ok()) return body.status();
  def->body = std::move(body).value();
  MET_RETURN_IF_ERROR(expect_end_tag("endcall"));
  def->body_captures = contains_closure(def->body);
  return make_stmt(at, node::CallBlock{std::move(call), std::move(def)});
}

Result<StmtPtr> Parser::parse_filter_block(SourceLoc at) {
  node::FilterBlock n;
  MET_ASSIGN_OR_RETURN(n.filter, parse_filter_chain());
  MET_RETURN_IF_ERROR(expect_block_end());
  MET_ASSIGN_OR_RETURN(n.body, parse_body({"endfilter"}));
  MET_RETURN_IF_ERROR(expect_end_tag("endfilter"));
  return make_stmt(at, std::move(n));
}

Result<StmtPtr> Parser::parse_with(SourceLoc at) {
  node::With n;
  while (peek().kind != TokenKind::kBlockEnd) {
    if (!n.assignments.empty()) MET_RETURN_IF_ERROR(expect_op(","));
    MET_ASSIGN_OR_RETURN(std::string name, expect_name());
    MET_RETURN_IF_ERROR(expect_op("="));
    MET_ASSIGN_OR_RETURN(ExprPtr value, parse_expression());
    n.assignments.emplace_back(std::move(name), std::move(value));
  }
  MET_RETURN_IF_ERROR(expect_block_end());
  MET_ASSIGN_OR_RETURN(n.body, parse_body({"endwith"}));
  MET_RETURN_IF_ERROR(expect_end_tag("endwith"));
  n.body_captures = contains_closure(n.body);
  return make_stmt(at, std::move(n));
}

Result<StmtPtr> Parser::parse_generation(SourceLoc at) {
  MET_RETURN_IF_ERROR(expect_block_end());
  node::Generation n;
  MET_ASSIGN_OR_RETURN(n.body, parse_body({"endgeneration"}));
  MET_RETURN_IF_ERROR(expect_end_tag("endgeneration"));
  return make_stmt(at, std::move(n));
}

Result<StmtPtr> Parser::parse_loop_control(SourceLoc at, bool is_break) {
  if (loop_depth_ == 0) {
    return syntax_error(at, "'{}' is only allowed inside a for loop", is_break ? "break" : "continue");
  }
  MET_RETURN_IF_ERROR(expect_block_end());
  if (is_break) return make_stmt(at, node::Break{});
  return make_stmt(at, node::Continue{});
}

}  // namespace met::jinja
