// What a template can call: FuncObj (a macro, a call block's `caller`, or a
// built-in such as range() or a bound method like "a,b".split), the arguments
// of a call (CallArgs), and Python-style binding of them to a built-in's
// parameter names (BoundArgs).
// Invariants: a FuncObj of kind kMacro has a non-null def and closure; one of
// kind kBuiltin a non-null builtin.
// Threading: the render that owns it. Tested by tests/chat/callable_test.cc.
#pragma once

#include <array>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <vector>

#include "chat/jinja/value.h"
#include "core/status.h"

namespace met::jinja {

class Runtime;
class Scope;
struct MacroDef;

struct NamedArg {
  std::string_view name;
  Value value;
};

struct CallArgs {
  std::vector<Value> positional;
  std::vector<NamedArg> named;
};

using BuiltinFn = Result<Value> (*)(Runtime& rt, const Value& self, const CallArgs& args);

struct FuncObj {
  enum class Kind : uint8_t { kMacro, kBuiltin };
  Kind kind = Kind::kBuiltin;
  std::string_view name;
  const MacroDef* def = nullptr;  // kMacro: a macro or a call block's caller
  Scope* closure = nullptr;       // kMacro: the frame it was defined in
  BuiltinFn builtin = nullptr;    // kBuiltin
  Value self;                     // kBuiltin: the bound receiver, undefined for a global
};

// Arguments matched to a built-in's parameters as Python would: positional
// first, then by name. At most kMaxParams parameters.
class BoundArgs {
 public:
  static constexpr size_t kMaxParams = 8;

  // Fails with a TypeError on too many positional arguments, an unknown name,
  // or a parameter given twice.
  static Result<BoundArgs> bind(std::string_view function, const CallArgs& args,
                                std::initializer_list<std::string_view> params);

  bool has(size_t i) const { return slots_[i].has_value(); }
  // The argument, or undefined when it was not given.
  Value get(size_t i) const { return slots_[i].value_or(Value()); }
  Value get_or(size_t i, Value fallback) const { return slots_[i].value_or(fallback); }
  // Typed access; a wrong type is a TypeError naming the function and parameter.
  Result<int64_t> get_int(size_t i, int64_t fallback) const;
  Result<std::string_view> get_string(size_t i, std::string_view fallback) const;
  // Python truthiness of the argument, or `fallback`.
  bool get_flag(size_t i, bool fallback) const;

 private:
  std::string_view function_;
  std::array<std::string_view, kMaxParams> names_{};
  std::array<std::optional<Value>, kMaxParams> slots_{};
};

}  // namespace met::jinja
