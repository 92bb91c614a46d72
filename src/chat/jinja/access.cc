// Attribute, item and slice access. Tested by tests/chat/access_test.cc.
#include "chat/jinja/access.h"

#include <fmt/format.h>

#include "chat/jinja/errors.h"
#include "chat/jinja/loop_object.h"
#include "chat/jinja/methods.h"
#include "chat/jinja/utf8.h"
#include "chat/jinja/value_format.h"

namespace met::jinja {
namespace {

Value missing_attribute(const Value& obj, const std::string* name) {
  return Value::undefined(UndefinedReason::kAttribute, name, obj.kind());
}

// Python index normalisation: nullopt when out of range.
std::optional<size_t> normalize_index(int64_t i, size_t size) {
  const auto n = static_cast<int64_t>(size);
  if (i < 0) i += n;
  if (i < 0 || i >= n) return std::nullopt;
  return static_cast<size_t>(i);
}

Result<Value> missing_index(Runtime& rt, const Value& obj, int64_t index) {
  MET_ASSIGN_OR_RETURN(Value name, rt.heap().string(fmt::format("{}", index)));
  return Value::undefined(UndefinedReason::kItem, &name.as_string(), obj.kind());
}

Result<Value> string_index(Runtime& rt, const Value& obj, int64_t index) {
  const std::string& s = obj.as_string();
  if (is_ascii(s)) {
    auto i = normalize_index(index, s.size());
    if (!i) return missing_index(rt, obj, index);
    return rt.heap().string(s.substr(*i, 1));
  }
  const std::vector<size_t> offsets = utf8_offsets(s);
  auto i = normalize_index(index, offsets.size() - 1);
  if (!i) return missing_index(rt, obj, index);
  return rt.heap().string(s.substr(offsets[*i], offsets[*i + 1] - offsets[*i]));
}

Result<Value> mapping_item(Runtime& rt, const Value& obj, const Value& key) {
  if (!is_hashable(key)) return type_error("unhashable type: '{}'", type_name(key));
  if (const Value* v = obj.as_dict().find(key)) return *v;
  if (key.is_string()) return get_attribute(rt, obj, key.as_string());
  std::string repr;
  MET_RETURN_IF_ERROR(append_repr(key, repr, rt.string_room()));
  MET_ASSIGN_OR_RETURN(Value name, rt.heap().string(std::move(repr)));
  return missing_attribute(obj, &name.as_string());
}

struct SliceBounds {
  int64_t start, stop, step;
};

Result<int64_t> slice_part(const Value& v, int64_t fallback) {
  if (v.is_none() || v.is_undefined()) return fallback;
  if (!v.is_integral()) {
    return type_error("slice indices must be integers or None, not {}", type_name(v));
  }
  return v.as_int();
}

// CPython's PySlice_AdjustIndices.
Result<SliceBounds> adjust_slice(const Value& start, const Value& stop, const Value& step, size_t size) {
  const auto n = static_cast<int64_t>(size);
  MET_ASSIGN_OR_RETURN(int64_t st, slice_part(step, 1));
  if (st == 0) return value_error("slice step cannot be zero");
  const int64_t lower = st > 0 ? 0 : -1;
  const int64_t upper = st > 0 ? n : n - 1;
  auto clamp = [&](const Value& v, int64_t fallback) -> Result<int64_t> {
    if (v.is_none() || v.is_undefined()) return fallback;
    MET_ASSIGN_OR_RETURN(int64_t i, slice_part(v, fallback));
    if (i < 0) i = i < -n ? lower : i + n;
    if (i < lower) return lower;
    return i > upper ? upper : i;
  };
  MET_ASSIGN_OR_RETURN(int64_t a, clamp(start, st > 0 ? lower : upper));
  MET_ASSIGN_OR_RETURN(int64_t b, clamp(stop, st > 0 ? upper : lower));
  return SliceBounds{a, b, st};
}

template <typename F>
void for_each_slice_index(const SliceBounds& b, F&& f) {
  // 128-bit so that a huge step cannot overflow the index.
  if (b.step > 0) {
    for (__int128 i = b.start; i < b.stop; i += b.step) f(static_cast<size_t>(i));
  } else {
    for (__int128 i = b.start; i > b.stop; i += b.step) f(static_cast<size_t>(i));
  }
}

Result<Value> slice_string(Runtime& rt, const std::string& s, const Value& start, const Value& stop,
                           const Value& step) {
  const bool ascii = is_ascii(s);
  const std::vector<size_t> offsets = ascii ? std::vector<size_t>{} : utf8_offsets(s);
  const size_t n = ascii ? s.size() : offsets.size() - 1;
  MET_ASSIGN_OR_RETURN(SliceBounds b, adjust_slice(start, stop, step, n));
  std::string out;
  for_each_slice_index(b, [&](size_t i) {
    if (ascii) out += s[i];
    else out.append(s, offsets[i], offsets[i + 1] - offsets[i]);
  });
  return rt.heap().string(std::move(out));
}

Result<std::vector<Value>> string_chars(Runtime& rt, const std::string& s) {
  std::vector<Value> chars;
  for (size_t pos = 0; pos < s.size();) {
    const size_t start = pos;
    decode_utf8(s, pos);
    MET_ASSIGN_OR_RETURN(Value c, rt.heap().string(s.substr(start, pos - start)));
    chars.push_back(c);
  }
  return chars;
}

}  // namespace

Result<Value> bind_method(Runtime& rt, const Value& self, std::string_view name, BuiltinFn fn) {
  FuncObj f;
  f.kind = FuncObj::Kind::kBuiltin;
  f.name = name;
  f.builtin = fn;
  f.self = self;
  MET_ASSIGN_OR_RETURN(FuncObj * obj, rt.heap().function(f));
  return Value::function(obj);
}

Result<Value> get_attribute(Runtime& rt, const Value& obj, const std::string& name) {
  switch (obj.kind()) {
    case ValueKind::kUndefined:
      return undefined_error(obj);
    case ValueKind::kNamespace:
      if (const Value* v = obj.as_dict().find(std::string_view(name))) return *v;
      return missing_attribute(obj, &name);
    case ValueKind::kLoop: {
      MET_ASSIGN_OR_RETURN(std::optional<Value> v, loop_attribute(rt, obj, name));
      if (v) return *v;
      return missing_attribute(obj, &name);
    }
    case ValueKind::kDict:
    case ValueKind::kString:
    case ValueKind::kList:
    case ValueKind::kTuple:
      if (BuiltinFn fn = find_method(obj.kind(), name)) return bind_method(rt, obj, name, fn);
      if (obj.kind() == ValueKind::kDict) {
        if (const Value* v = obj.as_dict().find(std::string_view(name))) return *v;
      }
      return missing_attribute(obj, &name);
    case ValueKind::kNone:
    case ValueKind::kBool:
    case ValueKind::kInt:
    case ValueKind::kFloat:
    case ValueKind::kFunction:
      return missing_attribute(obj, &name);
  }
  return missing_attribute(obj, &name);
}

Result<Value> get_item(Runtime& rt, const Value& obj, const Value& key) {
  switch (obj.kind()) {
    case ValueKind::kUndefined:
      return undefined_error(obj);
    case ValueKind::kDict:
    case ValueKind::kNamespace:
      return mapping_item(rt, obj, key);
    case ValueKind::kList:
    case ValueKind::kTuple:
      if (key.is_integral()) {
        auto i = normalize_index(key.as_int(), obj.as_list().items.size());
        if (!i) return missing_index(rt, obj, key.as_int());
        return obj.as_list().items[*i];
      }
      break;
    case ValueKind::kString:
      if (key.is_integral()) return string_index(rt, obj, key.as_int());
      break;
    case ValueKind::kLoop:
    case ValueKind::kNone:
    case ValueKind::kBool:
    case ValueKind::kInt:
    case ValueKind::kFloat:
    case ValueKind::kFunction:
      break;
  }
  if (key.is_string()) return get_attribute(rt, obj, key.as_string());
  return Value::undefined(UndefinedReason::kItem, nullptr, obj.kind());
}

Result<Value> get_slice(Runtime& rt, const Value& obj, const Value& start, const Value& stop,
                        const Value& step) {
  if (obj.is_undefined()) return undefined_error(obj);
  if (obj.is_string()) return slice_string(rt, obj.as_string(), start, stop, step);
  if (!obj.is_sequence_object()) return Value::undefined(UndefinedReason::kItem, nullptr, obj.kind());
  const std::vector<Value>& items = obj.as_list().items;
  MET_ASSIGN_OR_RETURN(SliceBounds b, adjust_slice(start, stop, step, items.size()));
  std::vector<Value> out;
  for_each_slice_index(b, [&](size_t i) { out.push_back(items[i]); });
  MET_RETURN_IF_ERROR(rt.spend(out.size()));
  return obj.kind() == ValueKind::kTuple ? rt.heap().tuple(std::move(out)) : rt.heap().list(std::move(out));
}

Result<std::vector<Value>> iterate(Runtime& rt, const Value& v) {
  switch (v.kind()) {
    case ValueKind::kUndefined:
      return std::vector<Value>{};
    case ValueKind::kList:
    case ValueKind::kTuple:
      MET_RETURN_IF_ERROR(rt.spend(v.as_list().items.size()));
      return v.as_list().items;
    case ValueKind::kDict: {
      std::vector<Value> keys;
      MET_RETURN_IF_ERROR(rt.spend(v.as_dict().entries.size()));
      for (const auto& e : v.as_dict().entries) keys.push_back(e.first);
      return keys;
    }
    case ValueKind::kString:
      MET_RETURN_IF_ERROR(rt.spend(v.as_string().size()));
      return string_chars(rt, v.as_string());
    case ValueKind::kNone:
    case ValueKind::kBool:
    case ValueKind::kInt:
    case ValueKind::kFloat:
    case ValueKind::kNamespace:
    case ValueKind::kFunction:
    case ValueKind::kLoop:
      break;
  }
  return type_error("'{}' object is not iterable", type_name(v));
}

Result<int64_t> length(const Value& v) {
  switch (v.kind()) {
    case ValueKind::kUndefined:
      return 0;
    case ValueKind::kString:
      return static_cast<int64_t>(utf8_length(v.as_string()));
    case ValueKind::kList:
    case ValueKind::kTuple:
      return static_cast<int64_t>(v.as_list().items.size());
    case ValueKind::kDict:
      return static_cast<int64_t>(v.as_dict().entries.size());
    case ValueKind::kNone:
    case ValueKind::kBool:
    case ValueKind::kInt:
    case ValueKind::kFloat:
    case ValueKind::kNamespace:
    case ValueKind::kFunction:
    case ValueKind::kLoop:
      break;
  }
  return type_error("object of type '{}' has no len()", type_name(v));
}

}  // namespace met::jinja
