// BoundArgs. Tested by tests/chat/callable_test.cc.
#include "chat/jinja/callable.h"

#include "chat/jinja/errors.h"

namespace met::jinja {

Result<BoundArgs> BoundArgs::bind(std::string_view function, const CallArgs& args,
                                  std::initializer_list<std::string_view> params) {
  MET_CHECK(params.size() <= kMaxParams, "built-in {} has too many parameters", function);
  BoundArgs b;
  b.function_ = function;
  size_t n = 0;
  for (std::string_view p : params) b.names_[n++] = p;
  if (args.positional.size() > params.size()) {
    return type_error("{}() takes at most {} arguments ({} given)", function, params.size(),
                      args.positional.size());
  }
  for (size_t i = 0; i < args.positional.size(); ++i) b.slots_[i] = args.positional[i];
  for (const NamedArg& arg : args.named) {
    size_t i = 0;
    while (i < n && b.names_[i] != arg.name) ++i;
    if (i == n) return type_error("{}() got an unexpected keyword argument '{}'", function, arg.name);
    if (b.slots_[i].has_value()) {
      return type_error("{}() got multiple values for argument '{}'", function, arg.name);
    }
    b.slots_[i] = arg.value;
  }
  return b;
}

Result<int64_t> BoundArgs::get_int(size_t i, int64_t fallback) const {
  if (!slots_[i].has_value() || slots_[i]->is_none()) return fallback;
  if (!slots_[i]->is_integral()) {
    return type_error("{}(): argument '{}' must be an integer, not {}", function_, names_[i],
                      type_name(*slots_[i]));
  }
  return slots_[i]->as_int();
}

Result<std::string_view> BoundArgs::get_string(size_t i, std::string_view fallback) const {
  if (!slots_[i].has_value() || slots_[i]->is_none()) return fallback;
  if (!slots_[i]->is_string()) {
    return type_error("{}(): argument '{}' must be a string, not {}", function_, names_[i],
                      type_name(*slots_[i]));
  }
  return std::string_view(slots_[i]->as_string());
}

bool BoundArgs::get_flag(size_t i, bool fallback) const {
  return slots_[i].has_value() ? is_truthy(*slots_[i]) : fallback;
}

}  // namespace met::jinja
