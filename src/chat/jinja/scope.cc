// Scope. Tested by tests/chat/scope_test.cc.
#include "chat/jinja/scope.h"

namespace met::jinja {

const Value* Scope::find(std::string_view name) const {
  for (const Scope* s = this; s != nullptr; s = s->parent_) {
    for (const auto& [key, value] : s->vars_) {
      if (key == name) return &value;
    }
  }
  return nullptr;
}

void Scope::set(std::string_view name, const Value& value) {
  for (auto& [key, existing] : vars_) {
    if (key == name) {
      existing = value;
      return;
    }
  }
  vars_.emplace_back(name, value);
}

}  // namespace met::jinja
