// Scope: the variables one Jinja frame binds (the template's top level, one
// iteration of a for loop, one macro call, a with block), chained to the frame
// it was opened in. Lookups walk outwards; assignments bind in this frame only,
// which is Jinja's rule that a `set` inside a loop or macro does not leak.
// Invariants: names are views of strings that outlive the scope (the Program's
// names, the context's keys in the Heap, or string literals); a scope that a
// macro or call block may capture lives in the Heap, any other on the stack.
// Threading: the render that owns it. Tested by tests/chat/scope_test.cc.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

#include "chat/jinja/value.h"

namespace met::jinja {

class Scope {
 public:
  explicit Scope(Scope* parent) : parent_(parent) {}

  // The innermost binding of `name`, or null.
  const Value* find(std::string_view name) const;
  // Binds `name` in this frame.
  void set(std::string_view name, const Value& value);
  // Forgets this frame's bindings (a loop reuses its frame per iteration).
  void clear() { vars_.clear(); }
  Scope* parent() const { return parent_; }

 private:
  Scope* parent_;
  std::vector<std::pair<std::string_view, Value>> vars_;
};

}  // namespace met::jinja
