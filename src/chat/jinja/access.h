// Attribute, item and slice access, iteration and len() over Values, with
// Jinja2's lookup rules: `x.name` prefers a method of str/list/dict (so
// `d.items` is the method) and falls back to the item; `x['name']` prefers the
// item and falls back to the method; a missing key, attribute or index is
// undefined (carrying what was missing), and any access on undefined itself is
// an UndefinedError. Negative indexes and slices with steps follow Python;
// strings index by code point.
// Threading: pure functions over the caller's Runtime. Tested by
// tests/chat/access_test.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chat/jinja/callable.h"
#include "chat/jinja/runtime.h"
#include "chat/jinja/value.h"
#include "core/status.h"

namespace met::jinja {

// `name` must outlive the render (it names an undefined result).
Result<Value> get_attribute(Runtime& rt, const Value& obj, const std::string& name);
Result<Value> get_item(Runtime& rt, const Value& obj, const Value& key);
// obj[start:stop:step]; each bound may be None or undefined (absent).
Result<Value> get_slice(Runtime& rt, const Value& obj, const Value& start, const Value& stop,
                        const Value& step);
// What `for x in v` visits: list and tuple items, dict keys, the characters of
// a string; nothing for undefined. Costs a step per item.
Result<std::vector<Value>> iterate(Runtime& rt, const Value& v);
// len(v); 0 for undefined.
Result<int64_t> length(const Value& v);
// The method `name` of `self` as a callable value.
Result<Value> bind_method(Runtime& rt, const Value& self, std::string_view name, BuiltinFn fn);

}  // namespace met::jinja
