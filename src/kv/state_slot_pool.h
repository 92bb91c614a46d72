// StateSlotPool: which of the device's recurrent-state slots
// (DeviceInfo::num_state_slots) are held by a running sequence. A slot is
// taken when a sequence starts running (admission or resume) and given back
// on every path that stops it (finish, error, cancel, preemption), with its
// KV blocks (KvManager's ReleaseSeq).
// Invariants: a slot is free or held, never both; release() of a free slot
// is a bug (MET_CHECK); num_free() + num_in_use() == num_slots(). No
// allocation after construction (the free list is a stack).
// Threading: engine thread only. Tested by tests/kv/state_slot_pool_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/ids.h"

namespace met {

class StateSlotPool {
 public:
  // num_slots may be 0 (a model without recurrent layers: acquire() never
  // succeeds and is never needed).
  explicit StateSlotPool(int32_t num_slots);

  int32_t num_slots() const { return static_cast<int32_t>(held_.size()); }
  int32_t num_free() const { return static_cast<int32_t>(free_.size()); }
  int32_t num_in_use() const { return num_slots() - num_free(); }

  // A free slot, now held; nullopt when every slot is held. The lowest free
  // slot comes first at start, then the most recently released (warm).
  std::optional<StateSlotId> acquire();
  // REQUIRES: `slot` is held.
  void release(StateSlotId slot);

 private:
  std::vector<StateSlotId> free_;  // a stack
  std::vector<bool> held_;
};

}  // namespace met
