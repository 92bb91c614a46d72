// Interpreter: calls of macros, callers and built-ins, and filter
// application. Tested by tests/chat/macros_test.cc.
#include "chat/jinja/errors.h"
#include "chat/jinja/filters.h"
#include "chat/jinja/interpreter.h"

namespace met::jinja {

Result<CallArgs> Interpreter::eval_args(const std::vector<Arg>& args, Scope& scope) {
  CallArgs out;
  for (const Arg& a : args) {
    MET_ASSIGN_OR_RETURN(Value v, eval(*a.value, scope));
    if (a.name.empty()) {
      out.positional.push_back(v);
    } else {
      out.named.push_back(NamedArg{a.name, v});
    }
  }
  return out;
}

Result<Value> Interpreter::call_value(const Value& fn, const CallArgs& args) {
  if (fn.is_undefined()) return undefined_error(fn);
  if (fn.kind() != ValueKind::kFunction) return type_error("'{}' object is not callable", type_name(fn));
  const FuncObj& f = fn.as_function();
  switch (f.kind) {
    case FuncObj::Kind::kBuiltin:
      return f.builtin(rt_, f.self, args);
    case FuncObj::Kind::kMacro:
      return call_macro(f, args);
  }
  return Value();
}

Status Interpreter::bind_params(const MacroDef& def, const CallArgs& args, Scope& frame) {
  std::vector<bool> used(args.named.size(), false);
  for (size_t i = 0; i < def.params.size(); ++i) {
    const Param& p = def.params[i];
    std::optional<Value> v;
    if (i < args.positional.size()) v = args.positional[i];
    for (size_t k = 0; k < args.named.size(); ++k) {
      if (args.named[k].name != p.name) continue;
      if (v) return type_error("macro '{}' got multiple values for argument '{}'", def.name, p.name);
      v = args.named[k].value;
      used[k] = true;
    }
    if (!v && p.default_value) {
      MET_ASSIGN_OR_RETURN(v, eval(*p.default_value, frame));
    }
    frame.set(p.name, v.value_or(Value::undefined(UndefinedReason::kParameter, &p.name, ValueKind::kUndefined)));
  }
  // varargs and kwargs exist only when there are extra arguments (an absent
  // one is undefined, which iterates and measures like an empty one).
  if (args.positional.size() > def.params.size()) {
    std::vector<Value> extra(args.positional.begin() + static_cast<std::ptrdiff_t>(def.params.size()),
                             args.positional.end());
    MET_ASSIGN_OR_RETURN(Value varargs, rt_.heap().tuple(std::move(extra)));
    frame.set("varargs", varargs);
  }
  DictObj* kwargs = nullptr;
  for (size_t k = 0; k < args.named.size(); ++k) {
    if (used[k]) continue;
    if (args.named[k].name == "caller") {
      frame.set("caller", args.named[k].value);
      continue;
    }
    if (kwargs == nullptr) {
      MET_ASSIGN_OR_RETURN(kwargs, rt_.heap().dict());
      frame.set("kwargs", Value::dict(kwargs));
    }
    MET_ASSIGN_OR_RETURN(Value key, rt_.heap().string(args.named[k].name));
    MET_RETURN_IF_ERROR(rt_.heap().set_item(*kwargs, key, args.named[k].value));
  }
  return ok_status();
}

Result<Value> Interpreter::call_macro(const FuncObj& fn, const CallArgs& args) {
  if (macro_depth_ >= limits_.max_macro_depth) {
    return limit_error("macro calls nest deeper than {} levels", limits_.max_macro_depth);
  }
  ++macro_depth_;
  Result<std::string> text = run_macro(fn, args);
  --macro_depth_;
  if (!text.ok()) return text.status();
  return rt_.heap().string(std::move(text).value());
}

Result<std::string> Interpreter::run_macro(const FuncObj& fn, const CallArgs& args) {
  Scope stack_frame(fn.closure);
  MET_ASSIGN_OR_RETURN(Scope * frame, open_frame(fn.def->body_captures, fn.closure, stack_frame));
  MET_RETURN_IF_ERROR(bind_params(*fn.def, args, *frame));
  return capture(fn.def->body, *frame);
}

Result<Value> Interpreter::apply_filter(const node::Filter& f, const Value& input, Scope& scope) {
  FilterFn fn = find_filter(f.name);
  if (fn == nullptr) return invalid_argument("TemplateRuntimeError: no filter named '{}'", f.name);
  MET_ASSIGN_OR_RETURN(CallArgs args, eval_args(f.args, scope));
  return fn(rt_, input, args);
}

Result<Value> Interpreter::apply_filter_chain(const Expr& chain, const Value& input, Scope& scope) {
  const auto& f = std::get<node::Filter>(chain.node);
  Value inner = input;
  if (f.input) {
    MET_ASSIGN_OR_RETURN(inner, apply_filter_chain(*f.input, input, scope));
  }
  return apply_filter(f, inner, scope);
}

}  // namespace met::jinja
