// StateSnapshotCache: which of the device's snapshot slots holds the
// recurrent state after which prefix, for the hybrid models' prefix cache.
// A prefix is named by the chained key of its last block (kv/block_key.h),
// so a snapshot is found exactly where the block chain of a prompt reaches
// it; the KV of the prefix comes from the block pool as for any model.
// Entries are evicted least recently used first, never while pinned (a
// sequence admitted from it has not yet launched the step that restores it)
// and never in the step that writes them (new_step() marks where one begins),
// so a step never writes two snapshots into one slot.
// Invariants: each slot holds at most one key and each key one slot; a
// pinned entry is never evicted; no allocation after construction (the
// entries are a fixed array scanned linearly: there are tens of them).
// Threading: engine thread only. Tested by tests/kv/state_snapshot_cache_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/ids.h"
#include "kv/block_key.h"

namespace met {

class StateSnapshotCache {
 public:
  // The cache may fill `slots` (none: snapshots are off).
  explicit StateSnapshotCache(std::vector<StateSlotId> slots);

  int32_t capacity() const { return static_cast<int32_t>(entries_.size()); }
  int32_t size() const;

  // The slot holding the state after the prefix keyed `key`, if cached.
  std::optional<StateSlotId> find(const BlockKey& key) const;
  // A slot for a new snapshot of `key`, registered at once: a free one, else
  // the least recently used unpinned entry's from before this step (which is
  // dropped); nullopt when `key` is cached already or no entry may go.
  std::optional<StateSlotId> insert(const BlockKey& key);
  // A new step is being built: entries inserted from now on are its own.
  void new_step() { fence_ = clock_; }
  // Marks `key`'s entry used now and pins it. REQUIRES: find(key).
  StateSlotId pin(const BlockKey& key);
  // REQUIRES: the entry holding `slot` is pinned.
  void unpin(StateSlotId slot);

 private:
  struct Entry {
    StateSlotId slot;
    std::optional<BlockKey> key;  // empty: the slot is free
    uint64_t last_used = 0;
    int32_t pins = 0;
  };
  Entry* entry_of(const BlockKey& key);
  const Entry* entry_of(const BlockKey& key) const;

  std::vector<Entry> entries_;
  uint64_t clock_ = 0;
  uint64_t fence_ = 0;  // entries inserted after it belong to the step being built
};

}  // namespace met
