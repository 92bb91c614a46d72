// Interpreter: statements and output. Tested by tests/chat/statements_test.cc,
// tests/chat/loop_test.cc and tests/chat/limits_test.cc.
#include "chat/jinja/interpreter.h"

#include "chat/jinja/access.h"
#include "chat/jinja/errors.h"
#include "chat/jinja/value_format.h"

namespace met::jinja {

Result<std::string> Interpreter::render(Scope& root) {
  std::string out;
  out_ = &out;
  auto flow = exec_body(program_.body, root);
  out_ = nullptr;
  if (!flow.ok()) return flow.status();
  return out;
}

Status Interpreter::emit(std::string_view text) {
  if (text.size() > limits_.max_output_bytes - out_->size()) {
    return limit_error("the output passed {} bytes", limits_.max_output_bytes);
  }
  out_->append(text);
  return ok_status();
}

Status Interpreter::emit_value(const Value& v) {
  if (v.is_string()) return emit(v.as_string());
  const size_t before = out_->size();
  Status s = append_str(v, *out_, limits_.max_output_bytes);
  if (s.ok() && out_->size() > limits_.max_output_bytes) {
    s = limit_error("the output passed {} bytes", limits_.max_output_bytes);
  }
  if (!s.ok()) out_->resize(before);
  return s;
}

Result<std::string> Interpreter::capture(const Body& body, Scope& scope) {
  std::string buffer;
  std::string* saved = out_;
  out_ = &buffer;
  auto flow = exec_body(body, scope);
  out_ = saved;
  if (!flow.ok()) return flow.status();
  return buffer;
}

Result<Scope*> Interpreter::open_frame(bool captured, Scope* parent, Scope& stack) {
  if (captured) return rt_.heap().scope(parent);
  stack.clear();
  return &stack;
}

Result<Interpreter::Flow> Interpreter::exec_body(const Body& body, Scope& scope) {
  for (const StmtPtr& stmt : body) {
    MET_ASSIGN_OR_RETURN(Flow flow, exec(*stmt, scope));
    if (flow != Flow::kNormal) return flow;
  }
  return Flow::kNormal;
}

Result<Interpreter::Flow> Interpreter::exec(const Stmt& stmt, Scope& scope) {
  if (++eval_depth_ > kMaxEvalDepth) {
    --eval_depth_;
    error_located_ = true;
    return located(limit_error("the template nests deeper than {} levels", kMaxEvalDepth), stmt.loc);
  }
  auto flow = std::visit([&](const auto& n) { return exec_node(n, scope); }, stmt.node);
  --eval_depth_;
  if (!flow.ok() && !error_located_) {
    error_located_ = true;
    return located(flow.status(), stmt.loc);
  }
  return flow;
}

Result<Interpreter::Flow> Interpreter::exec_node(const node::Text& n, Scope&) {
  MET_RETURN_IF_ERROR(emit(n.text));
  return Flow::kNormal;
}

Result<Interpreter::Flow> Interpreter::exec_node(const node::Output& n, Scope& scope) {
  MET_ASSIGN_OR_RETURN(Value v, eval(*n.expr, scope));
  MET_RETURN_IF_ERROR(emit_value(v));
  return Flow::kNormal;
}

Result<Interpreter::Flow> Interpreter::exec_node(const node::If& n, Scope& scope) {
  for (const auto& [condition, body] : n.branches) {
    MET_ASSIGN_OR_RETURN(Value v, eval(*condition, scope));
    if (is_truthy(v)) return exec_body(body, scope);
  }
  return exec_body(n.otherwise, scope);
}

Status Interpreter::bind_targets(const std::vector<std::string>& targets, const Value& value, Scope& scope) {
  if (targets.size() == 1) {
    scope.set(targets[0], value);
    return ok_status();
  }
  if (value.is_undefined()) return undefined_error(value);
  MET_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(rt_, value));
  if (items.size() != targets.size()) {
    if (items.size() < targets.size()) {
      return value_error("not enough values to unpack (expected {}, got {})", targets.size(), items.size());
    }
    return value_error("too many values to unpack (expected {})", targets.size());
  }
  for (size_t i = 0; i < targets.size(); ++i) scope.set(targets[i], items[i]);
  return ok_status();
}

Result<std::vector<Value>> Interpreter::filter_loop_items(const node::For& n, std::vector<Value> items,
                                                          Scope& scope) {
  std::vector<Value> kept;
  Scope frame(&scope);
  for (const Value& item : items) {
    MET_RETURN_IF_ERROR(rt_.spend());
    frame.clear();
    MET_RETURN_IF_ERROR(bind_targets(n.targets, item, frame));
    MET_ASSIGN_OR_RETURN(Value keep, eval(*n.filter, frame));
    if (is_truthy(keep)) kept.push_back(item);
  }
  return kept;
}

Result<Interpreter::Flow> Interpreter::exec_node(const node::For& n, Scope& scope) {
  MET_ASSIGN_OR_RETURN(Value iterable, eval(*n.iterable, scope));
  MET_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(rt_, iterable));
  if (n.filter) {
    MET_ASSIGN_OR_RETURN(items, filter_loop_items(n, std::move(items), scope));
  }
  if (items.empty()) {
    Scope stack_frame(&scope);
    MET_ASSIGN_OR_RETURN(Scope * frame, open_frame(n.body_captures, &scope, stack_frame));
    return exec_body(n.otherwise, *frame);  // a break here leaves an enclosing loop
  }
  MET_ASSIGN_OR_RETURN(LoopObj * loop, rt_.heap().loop(std::move(items)));
  return run_loop(n, *loop, scope);
}

Result<Interpreter::Flow> Interpreter::run_loop(const node::For& n, LoopObj& loop, Scope& scope) {
  Scope stack_frame(&scope);
  for (size_t i = 0; i < loop.items.size(); ++i) {
    if (++loop_iterations_ > limits_.max_loop_iterations) {
      return limit_error("the template ran more than {} loop iterations", limits_.max_loop_iterations);
    }
    MET_ASSIGN_OR_RETURN(Scope * frame, open_frame(n.body_captures, &scope, stack_frame));
    loop.index0 = i;
    MET_RETURN_IF_ERROR(bind_targets(n.targets, loop.items[i], *frame));
    frame->set("loop", Value::loop(&loop));
    MET_ASSIGN_OR_RETURN(Flow flow, exec_body(n.body, *frame));
    if (flow == Flow::kBreak) break;
  }
  return Flow::kNormal;
}

Status Interpreter::assign(const node::Set& n, const Value& value, Scope& scope) {
  if (n.attribute.empty()) return bind_targets(n.targets, value, scope);
  const Value* target = scope.find(n.targets[0]);
  if (target == nullptr || target->kind() != ValueKind::kNamespace) {
    return type_error("cannot assign attribute '{}' on '{}': it is not a namespace()", n.attribute,
                      n.targets[0]);
  }
  return rt_.heap().set_item(target->as_dict(), Value::string(&n.attribute), value);
}

Result<Interpreter::Flow> Interpreter::exec_node(const node::Set& n, Scope& scope) {
  if (n.value) {
    MET_ASSIGN_OR_RETURN(Value v, eval(*n.value, scope));
    MET_RETURN_IF_ERROR(assign(n, v, scope));
    return Flow::kNormal;
  }
  MET_ASSIGN_OR_RETURN(std::string text, capture(n.body, scope));
  MET_ASSIGN_OR_RETURN(Value v, rt_.heap().string(std::move(text)));
  if (n.filter) {
    MET_ASSIGN_OR_RETURN(v, apply_filter_chain(*n.filter, v, scope));
  }
  MET_RETURN_IF_ERROR(assign(n, v, scope));
  return Flow::kNormal;
}

Result<Interpreter::Flow> Interpreter::exec_node(const node::Macro& n, Scope& scope) {
  FuncObj f;
  f.kind = FuncObj::Kind::kMacro;
  f.name = n.def->name;
  f.def = n.def.get();
  f.closure = &scope;
  MET_ASSIGN_OR_RETURN(FuncObj * fn, rt_.heap().function(f));
  scope.set(n.def->name, Value::function(fn));
  return Flow::kNormal;
}

Result<Interpreter::Flow> Interpreter::exec_node(const node::CallBlock& n, Scope& scope) {
  FuncObj f;
  f.kind = FuncObj::Kind::kMacro;
  f.name = "caller";
  f.def = n.caller.get();
  f.closure = &scope;
  MET_ASSIGN_OR_RETURN(FuncObj * caller, rt_.heap().function(f));
  const auto& call = std::get<node::Call>(n.call->node);
  MET_ASSIGN_OR_RETURN(Value callee, eval(*call.callee, scope));
  MET_ASSIGN_OR_RETURN(CallArgs args, eval_args(call.args, scope));
  args.named.push_back(NamedArg{"caller", Value::function(caller)});
  MET_ASSIGN_OR_RETURN(Value result, call_value(callee, args));
  MET_RETURN_IF_ERROR(emit_value(result));
  return Flow::kNormal;
}

Result<Interpreter::Flow> Interpreter::exec_node(const node::FilterBlock& n, Scope& scope) {
  MET_ASSIGN_OR_RETURN(std::string text, capture(n.body, scope));
  MET_ASSIGN_OR_RETURN(Value v, rt_.heap().string(std::move(text)));
  MET_ASSIGN_OR_RETURN(v, apply_filter_chain(*n.filter, v, scope));
  MET_RETURN_IF_ERROR(emit_value(v));
  return Flow::kNormal;
}

Result<Interpreter::Flow> Interpreter::exec_node(const node::With& n, Scope& scope) {
  Scope stack_frame(&scope);
  MET_ASSIGN_OR_RETURN(Scope * frame, open_frame(n.body_captures, &scope, stack_frame));
  for (const auto& [name, value] : n.assignments) {
    MET_ASSIGN_OR_RETURN(Value v, eval(*value, scope));
    frame->set(name, v);
  }
  return exec_body(n.body, *frame);
}

Result<Interpreter::Flow> Interpreter::exec_node(const node::Generation& n, Scope& scope) {
  return exec_body(n.body, scope);
}

Result<Interpreter::Flow> Interpreter::exec_node(const node::Break&, Scope&) { return Flow::kBreak; }

Result<Interpreter::Flow> Interpreter::exec_node(const node::Continue&, Scope&) { return Flow::kContinue; }

}  // namespace met::jinja
