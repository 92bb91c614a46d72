// Heap: the arena that owns every string, list, dict, function, loop object
// and captured scope a render creates, and charges each against the render's
// byte budget, so a template that builds values without end fails with a
// LimitError instead of exhausting memory. Nothing is freed before the render
// ends; cycles (`x.append(x)`) therefore cost nothing to tear down.
// Invariants: addresses handed out stay valid until the Heap is destroyed;
// used_bytes() never exceeds the budget after a successful call.
// Threading: the render that owns it. Tested by tests/chat/heap_test.cc.
#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "chat/jinja/callable.h"
#include "chat/jinja/loop_object.h"
#include "chat/jinja/scope.h"
#include "chat/jinja/value.h"
#include "core/status.h"

namespace met::jinja {

class Heap {
 public:
  explicit Heap(size_t budget_bytes) : budget_bytes_(budget_bytes) {}
  Heap(const Heap&) = delete;
  Heap& operator=(const Heap&) = delete;

  Result<Value> string(std::string s);
  Result<Value> string(std::string_view s) { return string(std::string(s)); }
  Value empty_string() const { return Value::string(&empty_); }
  Result<Value> list(std::vector<Value> items);
  Result<Value> tuple(std::vector<Value> items);
  Result<DictObj*> dict();
  Result<FuncObj*> function(FuncObj f);
  Result<LoopObj*> loop(std::vector<Value> items);
  Result<Scope*> scope(Scope* parent);

  // Grows an existing container, charging the growth.
  Status append(ListObj& list, const Value& item);
  Status set_item(DictObj& dict, const Value& key, const Value& value);
  // Charges `bytes` of growth the caller makes itself.
  Status charge(size_t bytes);
  // Whether `bytes` more would still fit (checked before building a result
  // whose size the template controls, such as 'x' * n).
  bool fits(size_t bytes) const { return bytes <= budget_bytes_ - used_bytes_; }
  size_t used_bytes() const { return used_bytes_; }
  size_t budget_bytes() const { return budget_bytes_; }

 private:
  const size_t budget_bytes_;
  size_t used_bytes_ = 0;
  const std::string empty_;
  std::deque<std::string> strings_;
  std::deque<ListObj> lists_;
  std::deque<DictObj> dicts_;
  std::deque<FuncObj> functions_;
  std::deque<LoopObj> loops_;
  std::deque<Scope> scopes_;
};

}  // namespace met::jinja
