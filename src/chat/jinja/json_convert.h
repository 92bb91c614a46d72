// Conversion between JSON and Values: the render context comes in as
// nlohmann::ordered_json (key order kept) and becomes Heap values; `tojson`
// prints Values as Python's json.dumps does (", " and ": " separators, or ","
// and ": " with an indent; ensure_ascii off by default; "Infinity" and "NaN";
// non-string keys converted as json.dumps converts them).
// Invariants: input nested deeper than kMaxValueDepth is refused, as is a
// value that contains itself.
// Threading: pure functions over the caller's Heap. Tested by
// tests/chat/json_convert_test.cc.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "chat/jinja/heap.h"
#include "chat/jinja/value.h"
#include "core/status.h"

namespace met::jinja {

struct JsonStyle {
  std::optional<std::string> indent;  // nullopt: one line
  std::string item_separator = ", ";
  std::string key_separator = ": ";
  bool sort_keys = false;
  bool ensure_ascii = false;
};

Result<Value> value_from_json(Heap& heap, const nlohmann::ordered_json& json);
// Appends json.dumps(v) with `style`. Values JSON cannot hold (undefined,
// functions, namespaces) are a TypeError, as in Python; passing max_bytes of
// output is a LimitError.
Status append_json(const Value& v, const JsonStyle& style, std::string& out, size_t max_bytes);
// Appends s as a JSON string literal.
void append_json_string(std::string_view s, bool ensure_ascii, std::string& out);

}  // namespace met::jinja
