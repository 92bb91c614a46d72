// StateSnapshotCache: which of the device's snapshot slots holds the
// recurrent state after which prefix, for the hybrid models' prefix cache.
// A prefix is named by the chained key of its last block (kv/block_key.h)
// and its depth in blocks, so the deepest snapshot on a prompt's block chain
// is found by looking at each entry once; the KV of the prefix comes from
// the block pool as for any model.
// Two kinds of entry: plain ones (a prompt's snapshots at interval
// boundaries and at its last block) and one rolling entry per running
// sequence that decodes (owner set): each snapshot its output takes
// (KvManager says where) rekeys that entry in place, so a finished
// conversation leaves its state near its end behind without filling the
// cache with its history. A snapshot taken by a step launched ahead of its
// input (the pipelined lane) is pending until the host commits that input:
// it holds a slot of its own and is never found; fulfil() keys it (and it
// takes the place of its sequence's rolling entry), cancel() frees it.
// Entries are evicted least recently used first, never while pinned (a
// sequence admitted from it has not yet launched the step that restores it)
// or pending, and never in the step that writes them (new_step() marks where
// one begins), so a step never writes two snapshots into one slot.
// Invariants: each slot holds at most one key and each key one slot; a
// pinned or pending entry is never evicted or rekeyed; an owner has at most
// one entry; no allocation after construction (the entries are a fixed array
// scanned linearly: there are tens of them).
// Threading: engine thread only. Tested by tests/kv/state_snapshot_cache_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/ids.h"
#include "kv/block_key.h"

namespace met {

class StateSnapshotCache {
 public:
  // The cache may fill `slots` (none: snapshots are off).
  explicit StateSnapshotCache(std::vector<StateSlotId> slots);

  int32_t capacity() const { return static_cast<int32_t>(entries_.size()); }
  int32_t size() const;  // keyed entries
  int32_t num_pending() const;

  // The slot holding the state after the prefix keyed `key`, if cached.
  std::optional<StateSlotId> find(const BlockKey& key) const;
  // The depth in blocks of the deepest snapshot on `chain` (chain[i]: the key
  // of a prompt's first i + 1 blocks), 0 when none.
  int32_t deepest(std::span<const BlockKey> chain) const;
  // A slot for a new snapshot of the `depth`-block prefix keyed `key`,
  // registered at once: a free one, else the least recently used evictable
  // entry's from before this step (which is dropped); nullopt when `key` is
  // cached already or no entry may go.
  std::optional<StateSlotId> insert(const BlockKey& key, int32_t depth);
  // `owner`'s rolling snapshot of `depth` blocks: its own entry rekeyed in
  // place when it may be (not pinned, pending or written this step), else a
  // new entry (the old one stays, no longer owned). `key` nullopt: a new
  // pending entry, which takes the owned one's place when fulfilled (so a
  // cancelled one leaves it be). nullopt when `key` is cached already or no
  // entry may go.
  std::optional<StateSlotId> insert_rolling(SeqId owner, const std::optional<BlockKey>& key, int32_t depth);
  // The pending entry in `slot` gets its key (dropped instead when the key
  // is cached already). REQUIRES: it is pending.
  void fulfil(StateSlotId slot, const BlockKey& key);
  // The pending entry in `slot` is freed. REQUIRES: it is pending.
  void cancel(StateSlotId slot);
  // `owner` keeps no rolling entry: it becomes a plain one (kept) or, with
  // `drop`, is freed when nothing pins it.
  void disown(SeqId owner, bool drop);
  // The snapshot keyed `key` is freed unless pinned or written this step (its
  // block left the prefix cache, so no chain reaches it any more).
  void erase(const BlockKey& key);
  // A new step is being built: entries inserted from now on are its own.
  void new_step() { fence_ = clock_; }
  // Marks `key`'s entry used now and pins it. REQUIRES: find(key).
  StateSlotId pin(const BlockKey& key);
  // REQUIRES: the entry holding `slot` is pinned.
  void unpin(StateSlotId slot);

 private:
  struct Entry {
    StateSlotId slot;
    std::optional<BlockKey> key;  // empty and not pending: the slot is free
    int32_t depth = 0;
    uint64_t last_used = 0;  // written or pinned
    uint64_t written = 0;    // after the fence: written by the step being built
    int32_t pins = 0;
    bool pending = false;
    std::optional<SeqId> owner;    // a running sequence's rolling snapshot
    std::optional<SeqId> heir_of;  // pending: becomes that sequence's rolling snapshot once fulfilled
    bool is_free() const { return !key.has_value() && !pending; }
  };
  Entry* entry_of(const BlockKey& key);
  const Entry* entry_of(const BlockKey& key) const;
  Entry& entry_in(StateSlotId slot);
  Entry* owned_by(SeqId owner);
  // Not pinned, pending or written by the step being built: it may be
  // evicted, rekeyed or freed.
  bool may_rewrite(const Entry& e) const;
  // A free entry, else the least recently used one that may be evicted.
  Entry* victim();
  StateSlotId take(Entry& e, const std::optional<BlockKey>& key, int32_t depth, std::optional<SeqId> owner);
  static void clear(Entry& e);

  std::vector<Entry> entries_;
  uint64_t clock_ = 0;
  uint64_t fence_ = 0;  // entries inserted after it belong to the step being built
};

}  // namespace met
