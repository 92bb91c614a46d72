// Heap. Tested by tests/chat/heap_test.cc.
#include "chat/jinja/heap.h"

#include "chat/jinja/errors.h"

namespace met::jinja {
namespace {

constexpr size_t kObjectBytes = 64;  // what one allocation costs besides its payload

}  // namespace

Status Heap::charge(size_t bytes) {
  if (!fits(bytes)) {
    return limit_error("the template's values need more than {} bytes", budget_bytes_);
  }
  used_bytes_ += bytes;
  return ok_status();
}

Status Heap::append(ListObj& list, const Value& item) {
  MET_RETURN_IF_ERROR(charge(sizeof(Value)));
  list.items.push_back(item);
  return ok_status();
}

Status Heap::set_item(DictObj& dict, const Value& key, const Value& value) {
  if (dict.find(key) == nullptr) MET_RETURN_IF_ERROR(charge(2 * sizeof(Value) + sizeof(size_t)));
  dict.set(key, value);
  return ok_status();
}

Result<Value> Heap::string(std::string s) {
  if (s.empty()) return empty_string();
  MET_RETURN_IF_ERROR(charge(kObjectBytes + s.size()));
  strings_.push_back(std::move(s));
  return Value::string(&strings_.back());
}

Result<Value> Heap::list(std::vector<Value> items) {
  MET_RETURN_IF_ERROR(charge(kObjectBytes + items.size() * sizeof(Value)));
  lists_.push_back(ListObj{std::move(items)});
  return Value::list(&lists_.back());
}

Result<Value> Heap::tuple(std::vector<Value> items) {
  MET_RETURN_IF_ERROR(charge(kObjectBytes + items.size() * sizeof(Value)));
  lists_.push_back(ListObj{std::move(items)});
  return Value::tuple(&lists_.back());
}

Result<DictObj*> Heap::dict() {
  MET_RETURN_IF_ERROR(charge(kObjectBytes));
  dicts_.emplace_back();
  return &dicts_.back();
}

Result<FuncObj*> Heap::function(FuncObj f) {
  MET_RETURN_IF_ERROR(charge(kObjectBytes));
  functions_.push_back(f);
  return &functions_.back();
}

Result<LoopObj*> Heap::loop(std::vector<Value> items) {
  MET_RETURN_IF_ERROR(charge(kObjectBytes + items.size() * sizeof(Value)));
  loops_.emplace_back();
  loops_.back().items = std::move(items);
  return &loops_.back();
}

Result<Scope*> Heap::scope(Scope* parent) {
  MET_RETURN_IF_ERROR(charge(kObjectBytes));
  scopes_.emplace_back(parent);
  return &scopes_.back();
}

}  // namespace met::jinja
