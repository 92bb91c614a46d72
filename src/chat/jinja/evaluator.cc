// Interpreter: expressions. Tested by tests/chat/expressions_test.cc.
#include "chat/jinja/access.h"
#include "chat/jinja/errors.h"
#include "chat/jinja/interpreter.h"
#include "chat/jinja/jinja_tests.h"
#include "chat/jinja/methods.h"

namespace met::jinja {

Result<Value> Interpreter::eval(const Expr& expr, Scope& scope) {
  if (++eval_depth_ > kMaxEvalDepth) {
    --eval_depth_;
    error_located_ = true;
    return located(limit_error("the template nests deeper than {} levels", kMaxEvalDepth), expr.loc);
  }
  Status spent = rt_.spend();
  Result<Value> v = spent.ok() ? std::visit([&](const auto& n) { return eval_node(n, scope); }, expr.node)
                               : Result<Value>(spent);
  --eval_depth_;
  if (!v.ok() && !error_located_) {
    error_located_ = true;
    return located(v.status(), expr.loc);
  }
  return v;
}

Result<Value> Interpreter::eval_optional(const ExprPtr& expr, Scope& scope) {
  if (!expr) return Value::none();
  return eval(*expr, scope);
}

Result<Value> Interpreter::eval_node(const node::Literal& n, Scope&) { return n.value; }

Result<Value> Interpreter::eval_node(const node::Name& n, Scope& scope) {
  if (const Value* v = scope.find(n.name)) return *v;
  return Value::undefined(UndefinedReason::kName, &n.name, ValueKind::kUndefined);
}

Result<Value> Interpreter::eval_node(const node::List& n, Scope& scope) {
  std::vector<Value> items;
  items.reserve(n.items.size());
  for (const ExprPtr& e : n.items) {
    MET_ASSIGN_OR_RETURN(Value v, eval(*e, scope));
    items.push_back(v);
  }
  return n.is_tuple ? rt_.heap().tuple(std::move(items)) : rt_.heap().list(std::move(items));
}

Result<Value> Interpreter::eval_node(const node::Dict& n, Scope& scope) {
  MET_ASSIGN_OR_RETURN(DictObj * d, rt_.heap().dict());
  for (const auto& [key_expr, value_expr] : n.items) {
    MET_ASSIGN_OR_RETURN(Value key, eval(*key_expr, scope));
    if (!is_hashable(key)) return type_error("unhashable type: '{}'", type_name(key));
    MET_ASSIGN_OR_RETURN(Value value, eval(*value_expr, scope));
    MET_RETURN_IF_ERROR(rt_.heap().set_item(*d, key, value));
  }
  return Value::dict(d);
}

Result<Value> Interpreter::eval_node(const node::Attribute& n, Scope& scope) {
  MET_ASSIGN_OR_RETURN(Value obj, eval(*n.object, scope));
  return get_attribute(rt_, obj, n.name);
}

Result<Value> Interpreter::eval_node(const node::Item& n, Scope& scope) {
  MET_ASSIGN_OR_RETURN(Value obj, eval(*n.object, scope));
  MET_ASSIGN_OR_RETURN(Value key, eval(*n.key, scope));
  return get_item(rt_, obj, key);
}

Result<Value> Interpreter::eval_node(const node::Slice& n, Scope& scope) {
  MET_ASSIGN_OR_RETURN(Value obj, eval(*n.object, scope));
  MET_ASSIGN_OR_RETURN(Value start, eval_optional(n.start, scope));
  MET_ASSIGN_OR_RETURN(Value stop, eval_optional(n.stop, scope));
  MET_ASSIGN_OR_RETURN(Value step, eval_optional(n.step, scope));
  return get_slice(rt_, obj, start, stop, step);
}

Result<Value> Interpreter::eval_node(const node::Call& n, Scope& scope) {
  if (const auto* attr = std::get_if<node::Attribute>(&n.callee->node)) {
    // A method call: no bound-method object is made.
    MET_ASSIGN_OR_RETURN(Value obj, eval(*attr->object, scope));
    MET_ASSIGN_OR_RETURN(CallArgs args, eval_args(n.args, scope));
    if (BuiltinFn method = find_method(obj.kind(), attr->name)) return method(rt_, obj, args);
    MET_ASSIGN_OR_RETURN(Value fn, get_attribute(rt_, obj, attr->name));
    return call_value(fn, args);
  }
  MET_ASSIGN_OR_RETURN(Value fn, eval(*n.callee, scope));
  MET_ASSIGN_OR_RETURN(CallArgs args, eval_args(n.args, scope));
  return call_value(fn, args);
}

Result<Value> Interpreter::eval_node(const node::Filter& n, Scope& scope) {
  MET_ASSIGN_OR_RETURN(Value input, eval(*n.input, scope));
  return apply_filter(n, input, scope);
}

Result<Value> Interpreter::eval_node(const node::Test& n, Scope& scope) {
  MET_ASSIGN_OR_RETURN(Value input, eval(*n.input, scope));
  TestFn test = find_test(n.name);
  if (test == nullptr) return invalid_argument("TemplateRuntimeError: no test named '{}'", n.name);
  MET_ASSIGN_OR_RETURN(CallArgs args, eval_args(n.args, scope));
  MET_ASSIGN_OR_RETURN(bool result, test(rt_, input, args));
  return Value::boolean(result != n.negated);
}

Result<Value> Interpreter::eval_node(const node::Unary& n, Scope& scope) {
  MET_ASSIGN_OR_RETURN(Value v, eval(*n.operand, scope));
  switch (n.op) {
    case UnaryOp::kNot: return Value::boolean(!is_truthy(v));
    case UnaryOp::kNeg: return negate(v);
    case UnaryOp::kPos: return unary_plus(v);
  }
  return v;
}

Result<Value> Interpreter::eval_node(const node::Arith& n, Scope& scope) {
  MET_ASSIGN_OR_RETURN(Value left, eval(*n.left, scope));
  MET_ASSIGN_OR_RETURN(Value right, eval(*n.right, scope));
  return arithmetic(rt_, n.op, left, right);
}

Result<Value> Interpreter::eval_node(const node::Concat& n, Scope& scope) {
  MET_ASSIGN_OR_RETURN(Value acc, eval(*n.parts[0], scope));
  if (n.parts.size() == 1) return concat(rt_, rt_.heap().empty_string(), acc);
  for (size_t i = 1; i < n.parts.size(); ++i) {
    MET_ASSIGN_OR_RETURN(Value part, eval(*n.parts[i], scope));
    MET_ASSIGN_OR_RETURN(acc, concat(rt_, acc, part));
  }
  return acc;
}

Result<bool> Interpreter::compare_step(CompareKind kind, const Value& a, const Value& b) {
  switch (kind) {
    case CompareKind::kEq: return compare(rt_, CompareOp::kEq, a, b);
    case CompareKind::kNe: return compare(rt_, CompareOp::kNe, a, b);
    case CompareKind::kLt: return compare(rt_, CompareOp::kLt, a, b);
    case CompareKind::kLe: return compare(rt_, CompareOp::kLe, a, b);
    case CompareKind::kGt: return compare(rt_, CompareOp::kGt, a, b);
    case CompareKind::kGe: return compare(rt_, CompareOp::kGe, a, b);
    case CompareKind::kIn: return contains(rt_, b, a);
    case CompareKind::kNotIn: {
      MET_ASSIGN_OR_RETURN(bool in, contains(rt_, b, a));
      return !in;
    }
  }
  return false;
}

Result<Value> Interpreter::eval_node(const node::Compare& n, Scope& scope) {
  MET_ASSIGN_OR_RETURN(Value left, eval(*n.first, scope));
  for (const auto& [kind, right_expr] : n.steps) {
    MET_ASSIGN_OR_RETURN(Value right, eval(*right_expr, scope));
    MET_ASSIGN_OR_RETURN(bool holds, compare_step(kind, left, right));
    if (!holds) return Value::boolean(false);
    left = right;
  }
  return Value::boolean(true);
}

Result<Value> Interpreter::eval_node(const node::Logical& n, Scope& scope) {
  MET_ASSIGN_OR_RETURN(Value left, eval(*n.left, scope));
  if (is_truthy(left) != n.is_and) return left;  // `or` stops at truthy, `and` at falsy
  return eval(*n.right, scope);
}

Result<Value> Interpreter::eval_node(const node::Conditional& n, Scope& scope) {
  MET_ASSIGN_OR_RETURN(Value condition, eval(*n.condition, scope));
  if (is_truthy(condition)) return eval(*n.then, scope);
  if (n.otherwise) return eval(*n.otherwise, scope);
  return Value();
}

}  // namespace met::jinja
