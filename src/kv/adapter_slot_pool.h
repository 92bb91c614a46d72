// AdapterSlotPool: which LoRA adapter each of the device's adapter slots
// (DeviceInfo::num_adapter_slots) holds, and how many running sequences use
// it (the reference's acquire_adapter_slot and its release in
// free_sequence). A sequence takes a reference when it starts running
// (admission or resume) and gives it back on every path that stops it, with
// its KV blocks (KvManager's ReleaseSeq): swap-out releases, resume
// re-acquires (a resume does not re-run prefill). An adapter stays in its
// slot after its last user (warm for the next request); a slot no sequence
// uses is reused for another adapter, the empty ones first, then the least
// recently used, and the device is told (Device::bind_adapter).
// A plan (begin_plan / plan_take) says in order whether sequences could get
// a slot without taking any, for the scheduler's admission decisions.
// Invariants: users >= 0 per slot; a slot with users holds their adapter;
// release() of a slot without users is a bug (MET_CHECK). No allocation
// after construction.
// Threading: engine thread only. Tested by tests/kv/adapter_slot_pool_test.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "backend/device.h"
#include "core/status.h"

namespace met {

class AdapterSlotPool {
 public:
  // `device` binds adapters into its DeviceInfo::num_adapter_slots slots.
  explicit AdapterSlotPool(Device& device);

  int32_t num_slots() const { return static_cast<int32_t>(slots_.size()); }
  int32_t num_in_use() const;  // slots with users
  int32_t users(int32_t slot) const { return slots_[static_cast<size_t>(slot)].users; }
  const LoraAdapter* adapter(int32_t slot) const { return slots_[static_cast<size_t>(slot)].adapter.get(); }

  // A slot holding `adapter` with one more user: the one it is in, else a
  // slot without users, bound to it. nullopt when every slot has users of
  // other adapters (nothing changed); an error when the device refuses the
  // adapter (nothing changed).
  Result<std::optional<int32_t>> acquire(const std::shared_ptr<const LoraAdapter>& adapter);
  // REQUIRES: `slot` has users.
  void release(int32_t slot);

  // Planning over the pool as it is: plan_take says whether a sequence of
  // `adapter` could get a slot after those planned before it since
  // begin_plan (and counts it as taken); nothing changes.
  void begin_plan();
  bool plan_take(const LoraAdapter* adapter);

 private:
  struct Slot {
    std::shared_ptr<const LoraAdapter> adapter;
    int32_t users = 0;
    uint64_t last_used = 0;  // tick of its last release or acquire
    const LoraAdapter* planned = nullptr;  // the adapter the plan in progress has here
  };
  std::optional<int32_t> find(const LoraAdapter* adapter) const;
  // The slot a new adapter would take: an empty one, else the least recently
  // used without users (and, when planning, not planned); nullopt: none.
  std::optional<int32_t> victim(bool planning) const;

  Device& device_;
  std::vector<Slot> slots_;
  uint64_t clock_ = 0;
};

}  // namespace met
