// Value: one Jinja/Python value as the template engine sees it: undefined,
// None, bool, int, float, str, list, tuple, dict, namespace, a callable, or a
// for-loop's `loop` object. Values are 16-byte handles: scalars inline, every
// string and container a non-owning pointer into the render's Heap (or into the
// parsed Program, for literals and names), so copying a Value is free and
// lists and dicts have Python's reference semantics (`ns.items.append(x)` is
// seen through every alias).
// Invariants: a pointer payload is never null and outlives the render (the
// Heap and the Program both do); an undefined Value may carry the name that
// was missing, for the error an illegal use of it raises.
// Threading: a Value belongs to the render that made it; never shared.
// Tested by tests/chat/value_test.cc.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace met::jinja {

// How deeply values may nest before an operation that walks them (printing,
// JSON, equality, hashing) gives up: nothing recursive may exhaust the stack.
inline constexpr int kMaxValueDepth = 200;

struct ListObj;
struct DictObj;
struct FuncObj;
struct LoopObj;

enum class ValueKind : uint8_t {
  kUndefined,
  kNone,
  kBool,
  kInt,
  kFloat,
  kString,
  kList,
  kTuple,      // a ListObj that templates cannot mutate
  kDict,
  kNamespace,  // namespace(): a DictObj whose keys are attributes
  kFunction,
  kLoop,
};

// Why a Value is undefined; picks the wording of UndefinedError.
enum class UndefinedReason : uint8_t {
  kName,       // "'x' is undefined"
  kAttribute,  // "'dict object' has no attribute 'x'"
  kItem,       // "'list object' has no element 3"
  kParameter,  // "parameter 'x' was not provided"
  kEmpty,      // "No first item, sequence was empty."
};

class Value {
 public:
  Value() = default;  // undefined, no hint
  static Value none() { return Value(ValueKind::kNone); }
  static Value boolean(bool b);
  static Value integer(int64_t i);
  static Value floating(double d);
  static Value string(const std::string* s);
  // A string marked safe (Jinja's Markup, from |safe or |escape): adding a
  // plain string to it HTML-escapes the plain one.
  static Value markup(const std::string* s);
  static Value list(ListObj* l);
  static Value tuple(ListObj* l);
  static Value dict(DictObj* d);
  static Value name_space(DictObj* d);
  static Value function(FuncObj* f);
  static Value loop(LoopObj* l);
  // An undefined value; `name` (may be null) and `owner` explain it.
  static Value undefined(UndefinedReason why, const std::string* name, ValueKind owner);

  ValueKind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == ValueKind::kUndefined; }
  bool is_none() const { return kind_ == ValueKind::kNone; }
  bool is_string() const { return kind_ == ValueKind::kString; }
  bool is_markup() const { return kind_ == ValueKind::kString && aux_ == 1; }
  // int or bool (Python's bool is an int).
  bool is_integral() const { return kind_ == ValueKind::kInt || kind_ == ValueKind::kBool; }
  // int, bool or float.
  bool is_number() const { return is_integral() || kind_ == ValueKind::kFloat; }
  bool is_sequence_object() const { return kind_ == ValueKind::kList || kind_ == ValueKind::kTuple; }
  bool is_mapping_object() const { return kind_ == ValueKind::kDict || kind_ == ValueKind::kNamespace; }

  // REQUIRES: the matching kind.
  bool as_bool() const { return u_.b; }
  int64_t as_int() const { return kind_ == ValueKind::kBool ? (u_.b ? 1 : 0) : u_.i; }
  double as_float() const { return kind_ == ValueKind::kFloat ? u_.f : static_cast<double>(as_int()); }
  const std::string& as_string() const { return *u_.s; }
  ListObj& as_list() const { return *u_.list; }
  DictObj& as_dict() const { return *u_.dict; }
  FuncObj& as_function() const { return *u_.func; }
  LoopObj& as_loop() const { return *u_.loop; }
  // The identity of a heap object (sameas); null for scalars.
  const void* object_identity() const;

  UndefinedReason undefined_reason() const { return static_cast<UndefinedReason>(aux_); }
  ValueKind undefined_owner() const { return owner_; }
  const std::string* undefined_name() const { return kind_ == ValueKind::kUndefined ? u_.s : nullptr; }

 private:
  explicit Value(ValueKind k) : kind_(k) {}

  ValueKind kind_ = ValueKind::kUndefined;
  uint8_t aux_ = 0;
  ValueKind owner_ = ValueKind::kUndefined;
  union {
    bool b;
    int64_t i;
    double f;
    const std::string* s;
    ListObj* list;
    DictObj* dict;
    FuncObj* func;
    LoopObj* loop;
  } u_{.s = nullptr};
};

struct ListObj {
  std::vector<Value> items;
};

// An insertion-ordered dict. Keys are hashable Values (str, int, float, bool,
// None, tuples of those); string keys are indexed once a dict grows past a few
// entries.
struct DictObj {
  std::vector<std::pair<Value, Value>> entries;

  // The entry whose key equals `key` (Python equality), or null.
  const Value* find(const Value& key) const;
  const Value* find(std::string_view key) const;
  // Inserts or replaces; keeps the position of an existing key.
  void set(const Value& key, const Value& value);
  // Removes the entry for `key`; returns whether one existed.
  bool erase(const Value& key);

 private:
  std::ptrdiff_t position_of(const Value& key) const;
  std::ptrdiff_t position_of(std::string_view key) const;
  void rebuild_index();

  std::unordered_map<std::string_view, size_t> string_index_;  // built past kIndexThreshold
};

// Python's name for the type of `v` ("str", "int", "NoneType", "dict", ...).
std::string_view type_name(const Value& v);
// Python truthiness.
bool is_truthy(const Value& v);
// Whether `v` may be a dict key (Python hashability; tuples nested past
// kMaxValueDepth count as unhashable).
bool is_hashable(const Value& v);

}  // namespace met::jinja
