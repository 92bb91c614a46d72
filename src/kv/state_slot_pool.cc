// StateSlotPool. Tested by tests/kv/state_slot_pool_test.cc.
#include "kv/state_slot_pool.h"

#include "core/check.h"

namespace met {

StateSlotPool::StateSlotPool(int32_t num_slots) : held_(static_cast<size_t>(num_slots), false) {
  MET_CHECK(num_slots >= 0, "state slot pool of {} slots", num_slots);
  free_.reserve(static_cast<size_t>(num_slots));
  for (int32_t s = num_slots - 1; s >= 0; --s) free_.push_back(StateSlotId(s));
}

std::optional<StateSlotId> StateSlotPool::acquire() {
  if (free_.empty()) return std::nullopt;
  const StateSlotId slot = free_.back();
  free_.pop_back();
  held_[static_cast<size_t>(slot.value())] = true;
  return slot;
}

void StateSlotPool::release(StateSlotId slot) {
  MET_CHECK(slot.value() >= 0 && slot.value() < num_slots(), "state slot {} outside [0, {})", slot.value(),
            num_slots());
  MET_CHECK(held_[static_cast<size_t>(slot.value())], "state slot {} released twice", slot.value());
  held_[static_cast<size_t>(slot.value())] = false;
  free_.push_back(slot);
}

}  // namespace met
