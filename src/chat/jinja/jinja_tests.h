// The tests templates apply with `is` (`x is defined`, `x is not none`,
// `n is divisibleby 3`, `x is string`), looked up by name, with Jinja2's
// meanings: `number` includes bool, `integer` excludes it, `iterable` and
// `sequence` hold for strings and undefined, `mapping` only for dicts.
// Threading: the table is immutable. Tested by tests/chat/jinja_tests_test.cc.
#pragma once

#include <string_view>

#include "chat/jinja/callable.h"
#include "chat/jinja/runtime.h"
#include "chat/jinja/value.h"

namespace met::jinja {

using TestFn = Result<bool> (*)(Runtime& rt, const Value& v, const CallArgs& args);

// The test `name`, or null.
TestFn find_test(std::string_view name);

}  // namespace met::jinja
