// Value and DictObj. Tested by tests/chat/value_test.cc.
#include "chat/jinja/value.h"

#include "chat/jinja/loop_object.h"

namespace met::jinja {
namespace {

constexpr size_t kIndexThreshold = 8;

// Python equality restricted to hashable keys (str, numbers, None, tuples).
bool keys_equal(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_integral() && b.is_integral()) return a.as_int() == b.as_int();
    return a.as_float() == b.as_float();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case ValueKind::kString:
      return a.as_string() == b.as_string();
    case ValueKind::kNone:
    case ValueKind::kUndefined:
      return true;
    case ValueKind::kTuple: {
      const auto& x = a.as_list().items;
      const auto& y = b.as_list().items;
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!keys_equal(x[i], y[i])) return false;
      }
      return true;
    }
    case ValueKind::kBool:
    case ValueKind::kInt:
    case ValueKind::kFloat:
    case ValueKind::kList:
    case ValueKind::kDict:
    case ValueKind::kNamespace:
    case ValueKind::kFunction:
    case ValueKind::kLoop:
      return a.object_identity() == b.object_identity();
  }
  return false;
}

}  // namespace

Value Value::boolean(bool b) {
  Value v(ValueKind::kBool);
  v.u_.b = b;
  return v;
}
Value Value::integer(int64_t i) {
  Value v(ValueKind::kInt);
  v.u_.i = i;
  return v;
}
Value Value::floating(double d) {
  Value v(ValueKind::kFloat);
  v.u_.f = d;
  return v;
}
Value Value::string(const std::string* s) {
  Value v(ValueKind::kString);
  v.u_.s = s;
  return v;
}
Value Value::markup(const std::string* s) {
  Value v = string(s);
  v.aux_ = 1;
  return v;
}
Value Value::list(ListObj* l) {
  Value v(ValueKind::kList);
  v.u_.list = l;
  return v;
}
Value Value::tuple(ListObj* l) {
  Value v(ValueKind::kTuple);
  v.u_.list = l;
  return v;
}
Value Value::dict(DictObj* d) {
  Value v(ValueKind::kDict);
  v.u_.dict = d;
  return v;
}
Value Value::name_space(DictObj* d) {
  Value v(ValueKind::kNamespace);
  v.u_.dict = d;
  return v;
}
Value Value::function(FuncObj* f) {
  Value v(ValueKind::kFunction);
  v.u_.func = f;
  return v;
}
Value Value::loop(LoopObj* l) {
  Value v(ValueKind::kLoop);
  v.u_.loop = l;
  return v;
}
Value Value::undefined(UndefinedReason why, const std::string* name, ValueKind owner) {
  Value v(ValueKind::kUndefined);
  v.aux_ = static_cast<uint8_t>(why);
  v.owner_ = owner;
  v.u_.s = name;
  return v;
}

const void* Value::object_identity() const {
  switch (kind_) {
    case ValueKind::kString:
      return u_.s;
    case ValueKind::kList:
    case ValueKind::kTuple:
      return u_.list;
    case ValueKind::kDict:
    case ValueKind::kNamespace:
      return u_.dict;
    case ValueKind::kFunction:
      return u_.func;
    case ValueKind::kLoop:
      return u_.loop;
    case ValueKind::kUndefined:
    case ValueKind::kNone:
    case ValueKind::kBool:
    case ValueKind::kInt:
    case ValueKind::kFloat:
      return nullptr;
  }
  return nullptr;
}

std::string_view type_name(const Value& v) {
  switch (v.kind()) {
    case ValueKind::kUndefined: return "Undefined";
    case ValueKind::kNone: return "NoneType";
    case ValueKind::kBool: return "bool";
    case ValueKind::kInt: return "int";
    case ValueKind::kFloat: return "float";
    case ValueKind::kString: return "str";
    case ValueKind::kList: return "list";
    case ValueKind::kTuple: return "tuple";
    case ValueKind::kDict: return "dict";
    case ValueKind::kNamespace: return "Namespace";
    case ValueKind::kFunction: return "function";
    case ValueKind::kLoop: return "LoopContext";
  }
  return "object";
}

bool is_truthy(const Value& v) {
  switch (v.kind()) {
    case ValueKind::kUndefined:
    case ValueKind::kNone:
      return false;
    case ValueKind::kBool:
      return v.as_bool();
    case ValueKind::kInt:
      return v.as_int() != 0;
    case ValueKind::kFloat:
      return v.as_float() != 0.0;
    case ValueKind::kString:
      return !v.as_string().empty();
    case ValueKind::kList:
    case ValueKind::kTuple:
      return !v.as_list().items.empty();
    case ValueKind::kDict:
      return !v.as_dict().entries.empty();
    case ValueKind::kNamespace:
    case ValueKind::kFunction:
    case ValueKind::kLoop:
      return true;
  }
  return false;
}

namespace {

bool is_hashable_at(const Value& v, int depth) {
  switch (v.kind()) {
    case ValueKind::kNone:
    case ValueKind::kBool:
    case ValueKind::kInt:
    case ValueKind::kFloat:
    case ValueKind::kString:
    case ValueKind::kFunction:
    case ValueKind::kLoop:
    case ValueKind::kNamespace:
      return true;
    case ValueKind::kTuple:
      if (depth > kMaxValueDepth) return false;
      for (const Value& item : v.as_list().items) {
        if (!is_hashable_at(item, depth + 1)) return false;
      }
      return true;
    case ValueKind::kUndefined:
    case ValueKind::kList:
    case ValueKind::kDict:
      return false;
  }
  return false;
}

}  // namespace

bool is_hashable(const Value& v) { return is_hashable_at(v, 0); }

const Value* DictObj::find(const Value& key) const {
  const std::ptrdiff_t pos = position_of(key);
  return pos < 0 ? nullptr : &entries[static_cast<size_t>(pos)].second;
}

const Value* DictObj::find(std::string_view key) const {
  const std::ptrdiff_t pos = position_of(key);
  return pos < 0 ? nullptr : &entries[static_cast<size_t>(pos)].second;
}

void DictObj::set(const Value& key, const Value& value) {
  const std::ptrdiff_t pos = position_of(key);
  if (pos >= 0) {
    entries[static_cast<size_t>(pos)].second = value;
    return;
  }
  entries.emplace_back(key, value);
  if (!string_index_.empty() && key.is_string()) {
    string_index_.emplace(key.as_string(), entries.size() - 1);
  } else if (entries.size() == kIndexThreshold) {
    rebuild_index();
  }
}

bool DictObj::erase(const Value& key) {
  const std::ptrdiff_t pos = position_of(key);
  if (pos < 0) return false;
  entries.erase(entries.begin() + pos);
  string_index_.clear();
  if (entries.size() >= kIndexThreshold) rebuild_index();
  return true;
}

std::ptrdiff_t DictObj::position_of(const Value& key) const {
  if (key.is_string()) return position_of(std::string_view(key.as_string()));
  for (size_t i = 0; i < entries.size(); ++i) {
    if (keys_equal(entries[i].first, key)) return static_cast<std::ptrdiff_t>(i);
  }
  return -1;
}

std::ptrdiff_t DictObj::position_of(std::string_view key) const {
  if (!string_index_.empty()) {
    auto it = string_index_.find(key);
    return it == string_index_.end() ? -1 : static_cast<std::ptrdiff_t>(it->second);
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    const Value& k = entries[i].first;
    if (k.is_string() && k.as_string() == key) return static_cast<std::ptrdiff_t>(i);
  }
  return -1;
}

void DictObj::rebuild_index() {
  string_index_.clear();
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].first.is_string()) string_index_.emplace(entries[i].first.as_string(), i);
  }
}

}  // namespace met::jinja
