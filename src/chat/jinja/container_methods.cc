// Methods of list, tuple and dict. Tested by tests/chat/methods_test.cc.
#include <algorithm>
#include <array>

#include "chat/jinja/access.h"
#include "chat/jinja/errors.h"
#include "chat/jinja/methods.h"
#include "chat/jinja/operators.h"
#include "chat/jinja/runtime.h"

namespace met::jinja {
namespace {

Status no_arguments(std::string_view fn, const CallArgs& args) {
  if (args.positional.empty() && args.named.empty()) return ok_status();
  return type_error("{}() takes no arguments", fn);
}

Result<std::optional<size_t>> position_of(Runtime& rt, const std::vector<Value>& items, const Value& x) {
  for (size_t i = 0; i < items.size(); ++i) {
    MET_ASSIGN_OR_RETURN(bool eq, values_equal(rt, items[i], x));
    if (eq) return std::optional<size_t>(i);
  }
  return std::optional<size_t>();
}

Result<Value> list_append(Runtime& rt, const Value& self, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("append", args, {"object"}));
  if (!a.has(0)) return type_error("append() takes exactly one argument (0 given)");
  MET_RETURN_IF_ERROR(rt.heap().append(self.as_list(), a.get(0)));
  return Value::none();
}

Result<Value> list_extend(Runtime& rt, const Value& self, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("extend", args, {"iterable"}));
  if (a.get(0).is_undefined()) return undefined_error(a.get(0));
  MET_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(rt, a.get(0)));
  for (const Value& v : items) MET_RETURN_IF_ERROR(rt.heap().append(self.as_list(), v));
  return Value::none();
}

Result<Value> list_insert(Runtime& rt, const Value& self, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("insert", args, {"index", "object"}));
  MET_ASSIGN_OR_RETURN(int64_t index, a.get_int(0, 0));
  auto& items = self.as_list().items;
  const auto n = static_cast<int64_t>(items.size());
  if (index < 0) index = std::max<int64_t>(index + n, 0);
  index = std::min(index, n);
  MET_RETURN_IF_ERROR(rt.heap().charge(sizeof(Value)));
  items.insert(items.begin() + index, a.get(1));
  return Value::none();
}

Result<Value> list_pop(Runtime&, const Value& self, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("pop", args, {"index"}));
  MET_ASSIGN_OR_RETURN(int64_t index, a.get_int(0, -1));
  auto& items = self.as_list().items;
  if (items.empty()) return invalid_argument("IndexError: pop from empty list");
  const auto n = static_cast<int64_t>(items.size());
  if (index < 0) index += n;
  if (index < 0 || index >= n) return invalid_argument("IndexError: pop index out of range");
  const Value v = items[static_cast<size_t>(index)];
  items.erase(items.begin() + index);
  return v;
}

Result<Value> list_remove(Runtime& rt, const Value& self, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("remove", args, {"value"}));
  auto& items = self.as_list().items;
  MET_ASSIGN_OR_RETURN(std::optional<size_t> i, position_of(rt, items, a.get(0)));
  if (!i) return value_error("list.remove(x): x not in list");
  items.erase(items.begin() + static_cast<std::ptrdiff_t>(*i));
  return Value::none();
}

Result<Value> list_index(Runtime& rt, const Value& self, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("index", args, {"value"}));
  MET_ASSIGN_OR_RETURN(std::optional<size_t> i, position_of(rt, self.as_list().items, a.get(0)));
  if (!i) return value_error("value is not in {}", type_name(self));
  return Value::integer(static_cast<int64_t>(*i));
}

Result<Value> list_count(Runtime& rt, const Value& self, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("count", args, {"value"}));
  int64_t n = 0;
  for (const Value& v : self.as_list().items) {
    MET_ASSIGN_OR_RETURN(bool eq, values_equal(rt, v, a.get(0)));
    n += eq ? 1 : 0;
  }
  return Value::integer(n);
}

Result<Value> list_reverse(Runtime&, const Value& self, const CallArgs& args) {
  MET_RETURN_IF_ERROR(no_arguments("reverse", args));
  std::reverse(self.as_list().items.begin(), self.as_list().items.end());
  return Value::none();
}

Result<Value> list_copy(Runtime& rt, const Value& self, const CallArgs& args) {
  MET_RETURN_IF_ERROR(no_arguments("copy", args));
  return rt.heap().list(self.as_list().items);
}

Result<Value> list_clear(Runtime&, const Value& self, const CallArgs& args) {
  MET_RETURN_IF_ERROR(no_arguments("clear", args));
  self.as_list().items.clear();
  return Value::none();
}

Result<Value> dict_get(Runtime&, const Value& self, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("get", args, {"key", "default"}));
  if (!is_hashable(a.get(0))) return type_error("unhashable type: '{}'", type_name(a.get(0)));
  if (const Value* v = self.as_dict().find(a.get(0))) return *v;
  return a.get_or(1, Value::none());
}

Result<Value> dict_items(Runtime& rt, const Value& self, const CallArgs& args) {
  MET_RETURN_IF_ERROR(no_arguments("items", args));
  std::vector<Value> pairs;
  MET_RETURN_IF_ERROR(rt.spend(self.as_dict().entries.size()));
  for (const auto& [k, v] : self.as_dict().entries) {
    MET_ASSIGN_OR_RETURN(Value pair, rt.heap().tuple({k, v}));
    pairs.push_back(pair);
  }
  return rt.heap().list(std::move(pairs));
}

Result<Value> dict_keys(Runtime& rt, const Value& self, const CallArgs& args) {
  MET_RETURN_IF_ERROR(no_arguments("keys", args));
  MET_ASSIGN_OR_RETURN(std::vector<Value> keys, iterate(rt, self));
  return rt.heap().list(std::move(keys));
}

Result<Value> dict_values(Runtime& rt, const Value& self, const CallArgs& args) {
  MET_RETURN_IF_ERROR(no_arguments("values", args));
  std::vector<Value> values;
  MET_RETURN_IF_ERROR(rt.spend(self.as_dict().entries.size()));
  for (const auto& e : self.as_dict().entries) values.push_back(e.second);
  return rt.heap().list(std::move(values));
}

Status update_from(Runtime& rt, DictObj& d, const Value& other) {
  if (other.is_mapping_object()) {
    const auto entries = other.as_dict().entries;  // a copy: other may be d
    for (const auto& [k, v] : entries) MET_RETURN_IF_ERROR(rt.heap().set_item(d, k, v));
    return ok_status();
  }
  MET_ASSIGN_OR_RETURN(std::vector<Value> pairs, iterate(rt, other));
  for (const Value& p : pairs) {
    if (!p.is_sequence_object() || p.as_list().items.size() != 2) {
      return value_error("dictionary update sequence element has the wrong length; 2 is required");
    }
    if (!is_hashable(p.as_list().items[0])) return type_error("unhashable type");
    MET_RETURN_IF_ERROR(rt.heap().set_item(d, p.as_list().items[0], p.as_list().items[1]));
  }
  return ok_status();
}

Result<Value> dict_update(Runtime& rt, const Value& self, const CallArgs& args) {
  if (args.positional.size() > 1) return type_error("update expected at most 1 argument");
  if (!args.positional.empty()) MET_RETURN_IF_ERROR(update_from(rt, self.as_dict(), args.positional[0]));
  for (const NamedArg& n : args.named) {
    MET_ASSIGN_OR_RETURN(Value key, rt.heap().string(n.name));
    MET_RETURN_IF_ERROR(rt.heap().set_item(self.as_dict(), key, n.value));
  }
  return Value::none();
}

Result<Value> dict_pop(Runtime&, const Value& self, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("pop", args, {"key", "default"}));
  if (!is_hashable(a.get(0))) return type_error("unhashable type: '{}'", type_name(a.get(0)));
  if (const Value* v = self.as_dict().find(a.get(0))) {
    const Value found = *v;
    self.as_dict().erase(a.get(0));
    return found;
  }
  if (a.has(1)) return a.get(1);
  return invalid_argument("KeyError: the key is not in the dict");
}

Result<Value> dict_setdefault(Runtime& rt, const Value& self, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("setdefault", args, {"key", "default"}));
  if (!is_hashable(a.get(0))) return type_error("unhashable type: '{}'", type_name(a.get(0)));
  if (const Value* v = self.as_dict().find(a.get(0))) return *v;
  const Value fallback = a.get_or(1, Value::none());
  MET_RETURN_IF_ERROR(rt.heap().set_item(self.as_dict(), a.get(0), fallback));
  return fallback;
}

Result<Value> dict_copy(Runtime& rt, const Value& self, const CallArgs& args) {
  MET_RETURN_IF_ERROR(no_arguments("copy", args));
  MET_ASSIGN_OR_RETURN(DictObj * d, rt.heap().dict());
  MET_RETURN_IF_ERROR(update_from(rt, *d, self));
  return Value::dict(d);
}

struct MethodEntry {
  std::string_view name;
  BuiltinFn fn;
  bool on_tuple;
};

constexpr std::array kListMethods = {
    MethodEntry{"append", list_append, false}, MethodEntry{"extend", list_extend, false},
    MethodEntry{"insert", list_insert, false}, MethodEntry{"pop", list_pop, false},
    MethodEntry{"remove", list_remove, false}, MethodEntry{"index", list_index, true},
    MethodEntry{"count", list_count, true},    MethodEntry{"reverse", list_reverse, false},
    MethodEntry{"copy", list_copy, false},     MethodEntry{"clear", list_clear, false},
};

constexpr std::array kDictMethods = {
    MethodEntry{"get", dict_get, false},       MethodEntry{"items", dict_items, false},
    MethodEntry{"keys", dict_keys, false},     MethodEntry{"values", dict_values, false},
    MethodEntry{"update", dict_update, false}, MethodEntry{"pop", dict_pop, false},
    MethodEntry{"setdefault", dict_setdefault, false}, MethodEntry{"copy", dict_copy, false},
};

}  // namespace

BuiltinFn find_list_method(std::string_view name, bool is_tuple) {
  for (const MethodEntry& e : kListMethods) {
    if (e.name == name && (e.on_tuple || !is_tuple)) return e.fn;
  }
  return nullptr;
}

BuiltinFn find_dict_method(std::string_view name) {
  for (const MethodEntry& e : kDictMethods) {
    if (e.name == name) return e.fn;
  }
  return nullptr;
}

}  // namespace met::jinja
