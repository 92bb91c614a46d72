// Runtime: the narrow view of one render that built-ins (filters, tests,
// methods, globals) and value operations use: the Heap, the injected "now" for
// strftime_now, and the step budget that bounds the work a render may do
// (every expression evaluated, loop iteration, and element a built-in visits
// costs a step), so no template hangs the server.
// Invariants: steps_used() <= max_steps after every successful spend().
// Threading: the render that owns it. Tested through tests/chat/limits_test.cc.
#pragma once

#include <cstdint>
#include <ctime>

#include "chat/jinja/heap.h"
#include "core/status.h"

namespace met::jinja {

class Runtime {
 public:
  Runtime(Heap& heap, const std::tm& now, uint64_t max_steps)
      : heap_(heap), now_(now), max_steps_(max_steps) {}

  Heap& heap() { return heap_; }
  const std::tm& now() const { return now_; }
  // Charges `n` steps; a LimitError once the budget is spent.
  Status spend(uint64_t n = 1);
  uint64_t steps_used() const { return steps_used_; }
  // How many bytes a string built now may have (what the Heap could still hold).
  size_t string_room() const { return heap_.budget_bytes() - heap_.used_bytes(); }

 private:
  Heap& heap_;
  const std::tm now_;
  const uint64_t max_steps_;
  uint64_t steps_used_ = 0;
};

}  // namespace met::jinja
