// The syntax tree of a parsed template (Program): expressions (Expr) and
// statements (Stmt), each a std::variant of plain node structs so the
// interpreter's std::visit must handle every kind.
// Invariants: child pointers are never null except where a comment says
// "may be null"; a Literal string points into Program::strings, which lives as
// long as the Program; nodes never move once parsed (names are viewed by
// scopes during a render).
// Threading: immutable after parsing; any number of renders may read one
// Program at once. Tested by tests/chat/parser_test.cc.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "chat/jinja/errors.h"
#include "chat/jinja/operators.h"
#include "chat/jinja/value.h"

namespace met::jinja {

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct Arg {
  std::string name;  // empty for a positional argument
  ExprPtr value;
};

enum class UnaryOp : uint8_t { kNot, kNeg, kPos };
enum class CompareKind : uint8_t { kEq, kNe, kLt, kLe, kGt, kGe, kIn, kNotIn };

namespace node {

struct Literal {
  Value value;  // a scalar, or a string in Program::strings
};
struct Name {
  std::string name;
};
struct List {
  std::vector<ExprPtr> items;
  bool is_tuple = false;
};
struct Dict {
  std::vector<std::pair<ExprPtr, ExprPtr>> items;
};
struct Attribute {
  ExprPtr object;
  std::string name;
};
struct Item {
  ExprPtr object;
  ExprPtr key;
};
struct Slice {
  ExprPtr object;
  ExprPtr start, stop, step;  // each may be null
};
struct Call {
  ExprPtr callee;
  std::vector<Arg> args;
};
struct Filter {
  ExprPtr input;  // null in a filter block or a block set: the rendered body
  std::string name;
  std::vector<Arg> args;
};
struct Test {
  ExprPtr input;
  std::string name;
  std::vector<Arg> args;
  bool negated = false;
};
struct Unary {
  UnaryOp op;
  ExprPtr operand;
};
struct Arith {
  ArithOp op;
  ExprPtr left, right;
};
struct Concat {
  std::vector<ExprPtr> parts;
};
// a < b <= c: each step compares the previous operand with `right`.
struct Compare {
  ExprPtr first;
  std::vector<std::pair<CompareKind, ExprPtr>> steps;
};
struct Logical {
  bool is_and = false;
  ExprPtr left, right;
};
struct Conditional {
  ExprPtr condition, then;
  ExprPtr otherwise;  // may be null: undefined
};

}  // namespace node

struct Expr {
  SourceLoc loc;
  std::variant<node::Literal, node::Name, node::List, node::Dict, node::Attribute, node::Item,
               node::Slice, node::Call, node::Filter, node::Test, node::Unary, node::Arith,
               node::Concat, node::Compare, node::Logical, node::Conditional>
      node;
};

struct Param {
  std::string name;
  ExprPtr default_value;  // may be null
};

// A macro, or the body of a call block (which becomes `caller`).
struct MacroDef {
  std::string name;
  std::vector<Param> params;
  Body body;
  bool body_captures = false;  // the body defines a macro or call block: its frame goes on the Heap
};

namespace node {

struct Text {
  std::string text;
};
struct Output {
  ExprPtr expr;
};
struct If {
  std::vector<std::pair<ExprPtr, Body>> branches;  // if, then each elif
  Body otherwise;
};
struct For {
  std::vector<std::string> targets;  // one name, or several to unpack
  ExprPtr iterable;
  ExprPtr filter;  // may be null
  Body body;
  Body otherwise;
  bool body_captures = false;  // the body or else block defines a macro or call block
};
// `set a = …`, `set a, b = …`, `set ns.attr = …`; with `value` null, a block
// set whose rendered body passes through `filter` (a chain ending in a null
// input, or null).
struct Set {
  std::vector<std::string> targets;
  std::string attribute;  // non-empty: set targets[0].attribute
  ExprPtr value;
  Body body;
  ExprPtr filter;
};
struct Macro {
  std::unique_ptr<MacroDef> def;
};
struct CallBlock {
  ExprPtr call;  // a node::Call
  std::unique_ptr<MacroDef> caller;
};
struct FilterBlock {
  ExprPtr filter;  // a chain of node::Filter ending in a null input
  Body body;
};
struct With {
  std::vector<std::pair<std::string, ExprPtr>> assignments;
  Body body;
  bool body_captures = false;
};
// {% generation %}: Hugging Face's marker for assistant text; renders its body.
struct Generation {
  Body body;
};
struct Break {};
struct Continue {};

}  // namespace node

struct Stmt {
  SourceLoc loc;
  std::variant<node::Text, node::Output, node::If, node::For, node::Set, node::Macro,
               node::CallBlock, node::FilterBlock, node::With, node::Generation, node::Break,
               node::Continue>
      node;
};

template <typename Node>
ExprPtr make_expr(SourceLoc at, Node node) {
  auto e = std::make_unique<Expr>();
  e->loc = at;
  e->node = std::move(node);
  return e;
}

template <typename Node>
StmtPtr make_stmt(SourceLoc at, Node node) {
  auto s = std::make_unique<Stmt>();
  s->loc = at;
  s->node = std::move(node);
  return s;
}

struct Program {
  Body body;
  std::deque<std::string> strings;  // string literals' storage
};

}  // namespace met::jinja
