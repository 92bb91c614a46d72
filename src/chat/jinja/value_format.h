// Python's str() and repr() of Values, which is what `{{ x }}`, `~`, `|string`
// and `|join` print: True/False/None, floats as Python's shortest repr ("1.0",
// "0.1", "1e+16", "inf"), strings quoted the way repr picks, containers as
// "[1, 'a']", "(1,)", "{'k': 'v'}". Undefined prints as "".
// Invariants: a value nested deeper than kMaxValueDepth (or containing itself)
// is a LimitError, never unbounded recursion; printing stops with a LimitError
// once `out` passes max_bytes (every element prints at least one byte, so this
// also bounds the time a value built from many aliases takes).
// Threading: pure functions. Tested by tests/chat/value_format_test.cc.
#pragma once

#include <string>

#include "chat/jinja/value.h"
#include "core/status.h"

namespace met::jinja {

// Appends str(v).
Status append_str(const Value& v, std::string& out, size_t max_bytes);
// Appends repr(v).
Status append_repr(const Value& v, std::string& out, size_t max_bytes);
// Python's repr(float).
void append_float_repr(double d, std::string& out);
// repr(str): quoted and escaped as Python does.
void append_string_repr(std::string_view s, std::string& out);

}  // namespace met::jinja
