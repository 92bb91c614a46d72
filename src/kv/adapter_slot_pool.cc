// AdapterSlotPool. Tested by tests/kv/adapter_slot_pool_test.cc.
#include "kv/adapter_slot_pool.h"

#include "core/check.h"

namespace met {

AdapterSlotPool::AdapterSlotPool(Device& device)
    : device_(device), slots_(static_cast<size_t>(std::max(device.info().num_adapter_slots, 0))) {}

int32_t AdapterSlotPool::num_in_use() const {
  int32_t n = 0;
  for (const Slot& s : slots_) n += s.users > 0 ? 1 : 0;
  return n;
}

std::optional<int32_t> AdapterSlotPool::find(const LoraAdapter* adapter) const {
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i].adapter.get() == adapter) return static_cast<int32_t>(i);
  }
  return std::nullopt;
}

std::optional<int32_t> AdapterSlotPool::victim(bool planning) const {
  std::optional<int32_t> best;
  for (size_t i = 0; i < slots_.size(); ++i) {
    const Slot& s = slots_[i];
    if (s.users > 0 || (planning && s.planned != nullptr)) continue;
    if (s.adapter == nullptr) return static_cast<int32_t>(i);
    if (!best || s.last_used < slots_[static_cast<size_t>(*best)].last_used) best = static_cast<int32_t>(i);
  }
  return best;
}

Result<std::optional<int32_t>> AdapterSlotPool::acquire(const std::shared_ptr<const LoraAdapter>& adapter) {
  MET_CHECK(adapter != nullptr, "acquire: no adapter");
  std::optional<int32_t> slot = find(adapter.get());
  if (!slot) {
    slot = victim(false);
    if (!slot) return std::optional<int32_t>();
    MET_RETURN_IF_ERROR(device_.bind_adapter(*slot, adapter));
    slots_[static_cast<size_t>(*slot)].adapter = adapter;
  }
  Slot& s = slots_[static_cast<size_t>(*slot)];
  ++s.users;
  s.last_used = ++clock_;
  return slot;
}

void AdapterSlotPool::release(int32_t slot) {
  MET_CHECK(slot >= 0 && slot < num_slots() && slots_[static_cast<size_t>(slot)].users > 0,
            "adapter slot {} released without users", slot);
  Slot& s = slots_[static_cast<size_t>(slot)];
  --s.users;
  s.last_used = ++clock_;
}

void AdapterSlotPool::begin_plan() {
  for (Slot& s : slots_) s.planned = nullptr;
}

bool AdapterSlotPool::plan_take(const LoraAdapter* adapter) {
  if (adapter == nullptr) return true;
  for (const Slot& s : slots_) {
    if (s.planned == adapter) return true;
  }
  for (Slot& s : slots_) {
    if (s.adapter.get() == adapter && s.planned == nullptr) {
      s.planned = adapter;  // in use by the plan: not a victim for it
      return true;
    }
  }
  const std::optional<int32_t> slot = victim(true);
  if (!slot) return false;
  slots_[static_cast<size_t>(*slot)].planned = adapter;
  return true;
}

}  // namespace met
