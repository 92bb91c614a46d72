// The Python methods templates call on str, list, tuple and dict values
// ("a,b".split(','), messages.append(m), d.get('k', 'x'), d.items()), looked
// up by receiver kind and name. Unlike Hugging Face's immutable sandbox,
// list.append/extend/insert/pop and dict.update/pop/setdefault are allowed,
// as serving stacks allow them.
// Threading: the tables are immutable; the methods use the caller's Runtime.
// Tested by tests/chat/methods_test.cc.
#pragma once

#include <string_view>

#include "chat/jinja/callable.h"
#include "chat/jinja/value.h"

namespace met::jinja {

// The method `name` of a value of kind `receiver`, or null.
BuiltinFn find_method(ValueKind receiver, std::string_view name);

// Per type (string_methods.cc, container_methods.cc).
BuiltinFn find_string_method(std::string_view name);
BuiltinFn find_list_method(std::string_view name, bool is_tuple);
BuiltinFn find_dict_method(std::string_view name);

// A list Value of heap copies of `parts`.
Result<Value> make_string_list(Runtime& rt, const std::vector<std::string_view>& parts);

}  // namespace met::jinja
