// Interpreter: renders a Program into text: runs statements (interpreter.cc),
// evaluates expressions (evaluator.cc) and makes calls (invocation.cc: macros,
// callers, built-ins, filters and tests), writing into the current output
// buffer (macros, block sets and filter blocks render into their own).
// Invariants: macro calls nest at most max_macro_depth deep and evaluation at
// most kMaxEvalDepth, every loop iteration counts against max_loop_iterations,
// every buffer stays within max_output_bytes, and every expression costs one
// Runtime step; past any limit the render fails with a LimitError. The first
// error is tagged with the line and column of the innermost failing node.
// Threading: one Interpreter per render. Tested by tests/chat/*_test.cc
// (statements, expressions, macros, loops, limits).
#pragma once

#include <cstdint>
#include <string>

#include "chat/jinja/ast.h"
#include "chat/jinja/callable.h"
#include "chat/jinja/runtime.h"
#include "chat/jinja/scope.h"

namespace met::jinja {

struct RenderLimits {
  size_t max_output_bytes = 1 << 24;
  int max_macro_depth = 64;
  uint64_t max_loop_iterations = 1'000'000;
};

class Interpreter {
 public:
  static constexpr int kMaxEvalDepth = 400;

  Interpreter(const Program& program, Runtime& rt, const RenderLimits& limits)
      : program_(program), rt_(rt), limits_(limits) {}

  // Runs the template with `root` as its top-level frame.
  Result<std::string> render(Scope& root);

 private:
  enum class Flow : uint8_t { kNormal, kBreak, kContinue };

  // Statements (interpreter.cc).
  Result<Flow> exec_body(const Body& body, Scope& scope);
  Result<Flow> exec(const Stmt& stmt, Scope& scope);
  Result<Flow> exec_node(const node::Text& n, Scope& scope);
  Result<Flow> exec_node(const node::Output& n, Scope& scope);
  Result<Flow> exec_node(const node::If& n, Scope& scope);
  Result<Flow> exec_node(const node::For& n, Scope& scope);
  Result<Flow> exec_node(const node::Set& n, Scope& scope);
  Result<Flow> exec_node(const node::Macro& n, Scope& scope);
  Result<Flow> exec_node(const node::CallBlock& n, Scope& scope);
  Result<Flow> exec_node(const node::FilterBlock& n, Scope& scope);
  Result<Flow> exec_node(const node::With& n, Scope& scope);
  Result<Flow> exec_node(const node::Generation& n, Scope& scope);
  Result<Flow> exec_node(const node::Break& n, Scope& scope);
  Result<Flow> exec_node(const node::Continue& n, Scope& scope);
  Result<Flow> run_loop(const node::For& n, LoopObj& loop, Scope& scope);
  Result<std::vector<Value>> filter_loop_items(const node::For& n, std::vector<Value> items, Scope& scope);
  Status bind_targets(const std::vector<std::string>& targets, const Value& value, Scope& scope);
  Status assign(const node::Set& n, const Value& value, Scope& scope);
  // A frame for a loop iteration, macro call or with block: on the Heap when
  // it may be captured, else `stack`.
  Result<Scope*> open_frame(bool captured, Scope* parent, Scope& stack);
  Status emit(std::string_view text);
  Status emit_value(const Value& v);
  // Renders `body` into a fresh buffer.
  Result<std::string> capture(const Body& body, Scope& scope);

  // Expressions (evaluator.cc).
  Result<Value> eval(const Expr& expr, Scope& scope);
  Result<Value> eval_node(const node::Literal& n, Scope& scope);
  Result<Value> eval_node(const node::Name& n, Scope& scope);
  Result<Value> eval_node(const node::List& n, Scope& scope);
  Result<Value> eval_node(const node::Dict& n, Scope& scope);
  Result<Value> eval_node(const node::Attribute& n, Scope& scope);
  Result<Value> eval_node(const node::Item& n, Scope& scope);
  Result<Value> eval_node(const node::Slice& n, Scope& scope);
  Result<Value> eval_node(const node::Call& n, Scope& scope);
  Result<Value> eval_node(const node::Filter& n, Scope& scope);
  Result<Value> eval_node(const node::Test& n, Scope& scope);
  Result<Value> eval_node(const node::Unary& n, Scope& scope);
  Result<Value> eval_node(const node::Arith& n, Scope& scope);
  Result<Value> eval_node(const node::Concat& n, Scope& scope);
  Result<Value> eval_node(const node::Compare& n, Scope& scope);
  Result<Value> eval_node(const node::Logical& n, Scope& scope);
  Result<Value> eval_node(const node::Conditional& n, Scope& scope);
  Result<Value> eval_optional(const ExprPtr& expr, Scope& scope);
  Result<bool> compare_step(CompareKind kind, const Value& a, const Value& b);

  // Calls (invocation.cc).
  Result<CallArgs> eval_args(const std::vector<Arg>& args, Scope& scope);
  Result<Value> call_value(const Value& fn, const CallArgs& args);
  Result<Value> call_macro(const FuncObj& fn, const CallArgs& args);
  Result<std::string> run_macro(const FuncObj& fn, const CallArgs& args);
  Status bind_params(const MacroDef& def, const CallArgs& args, Scope& frame);
  // Applies a filter chain whose innermost input is null to `input`.
  Result<Value> apply_filter_chain(const Expr& chain, const Value& input, Scope& scope);
  Result<Value> apply_filter(const node::Filter& f, const Value& input, Scope& scope);

  const Program& program_;
  Runtime& rt_;
  const RenderLimits limits_;
  std::string* out_ = nullptr;
  int eval_depth_ = 0;
  int macro_depth_ = 0;
  uint64_t loop_iterations_ = 0;
  bool error_located_ = false;
};

}  // namespace met::jinja
