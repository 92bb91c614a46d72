// LoopObj: the `loop` variable of one for-loop run: index, index0, revindex,
// revindex0, first, last, length, previtem, nextitem, depth, depth0, and the
// methods cycle(...) and changed(...).
// Invariants: index0 < items.size() while the body runs; items are the
// iterated values after the loop's `if` filter, fixed when the loop starts.
// Threading: the render that owns it. Tested by tests/chat/loop_test.cc.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "chat/jinja/value.h"
#include "core/status.h"

namespace met::jinja {

class Runtime;

struct LoopObj {
  std::vector<Value> items;
  size_t index0 = 0;
  std::optional<std::vector<Value>> last_changed;  // changed()'s memory
};

// loop.<name>: a value, a bound method, or nullopt for a name loop lacks.
Result<std::optional<Value>> loop_attribute(Runtime& rt, const Value& loop, std::string_view name);

}  // namespace met::jinja
