// StateSnapshotCache. Tested by tests/kv/state_snapshot_cache_test.cc.
#include "kv/state_snapshot_cache.h"

#include "core/check.h"

namespace met {

StateSnapshotCache::StateSnapshotCache(std::vector<StateSlotId> slots) {
  entries_.reserve(slots.size());
  for (StateSlotId s : slots) {
    Entry e;
    e.slot = s;
    entries_.push_back(e);
  }
}

int32_t StateSnapshotCache::size() const {
  int32_t n = 0;
  for (const Entry& e : entries_) n += e.key.has_value() ? 1 : 0;
  return n;
}

int32_t StateSnapshotCache::num_pending() const {
  int32_t n = 0;
  for (const Entry& e : entries_) n += e.pending ? 1 : 0;
  return n;
}

const StateSnapshotCache::Entry* StateSnapshotCache::entry_of(const BlockKey& key) const {
  for (const Entry& e : entries_) {
    if (e.key == key) return &e;
  }
  return nullptr;
}

StateSnapshotCache::Entry* StateSnapshotCache::entry_of(const BlockKey& key) {
  return const_cast<Entry*>(static_cast<const StateSnapshotCache&>(*this).entry_of(key));
}

StateSnapshotCache::Entry& StateSnapshotCache::entry_in(StateSlotId slot) {
  for (Entry& e : entries_) {
    if (e.slot == slot) return e;
  }
  MET_CHECK(false, "state slot {} is not a snapshot slot", slot.value());
  return entries_.front();  // not reached
}

StateSnapshotCache::Entry* StateSnapshotCache::owned_by(SeqId owner) {
  for (Entry& e : entries_) {
    if (e.owner == owner) return &e;
  }
  return nullptr;
}

std::optional<StateSlotId> StateSnapshotCache::find(const BlockKey& key) const {
  const Entry* e = entry_of(key);
  return e != nullptr ? std::optional(e->slot) : std::nullopt;
}

int32_t StateSnapshotCache::deepest(std::span<const BlockKey> chain) const {
  int32_t best = 0;
  for (const Entry& e : entries_) {
    if (!e.key.has_value() || e.depth <= best || e.depth > static_cast<int32_t>(chain.size())) continue;
    if (chain[static_cast<size_t>(e.depth - 1)] == *e.key) best = e.depth;
  }
  return best;
}

StateSnapshotCache::Entry* StateSnapshotCache::victim() {
  Entry* victim = nullptr;
  for (Entry& e : entries_) {
    if (e.is_free()) return &e;
    if (may_rewrite(e) && (victim == nullptr || e.last_used < victim->last_used)) victim = &e;
  }
  return victim;
}

void StateSnapshotCache::clear(Entry& e) {
  e.key.reset();
  e.depth = 0;
  e.pins = 0;
  e.pending = false;
  e.owner.reset();
  e.heir_of.reset();
}

StateSlotId StateSnapshotCache::take(Entry& e, const std::optional<BlockKey>& key, int32_t depth,
                                     std::optional<SeqId> owner) {
  MET_CHECK(depth > 0, "a state snapshot of {} blocks", depth);
  clear(e);
  e.key = key;
  e.pending = !key.has_value();
  e.depth = depth;
  e.owner = owner;
  e.last_used = ++clock_;
  e.written = e.last_used;
  return e.slot;
}

std::optional<StateSlotId> StateSnapshotCache::insert(const BlockKey& key, int32_t depth) {
  if (entry_of(key) != nullptr) return std::nullopt;
  Entry* e = victim();
  if (e == nullptr) return std::nullopt;
  return take(*e, key, depth, std::nullopt);
}

bool StateSnapshotCache::may_rewrite(const Entry& e) const { return e.pins == 0 && !e.pending && e.written <= fence_; }

std::optional<StateSlotId> StateSnapshotCache::insert_rolling(SeqId owner, const std::optional<BlockKey>& key,
                                                             int32_t depth) {
  if (key.has_value() && entry_of(*key) != nullptr) return std::nullopt;
  Entry* own = owned_by(owner);
  if (!key.has_value()) {
    // Pending: the entry it owns stays until this one is fulfilled (the row
    // may yet be dropped).
    Entry* e = victim();
    if (e == nullptr) return std::nullopt;
    const StateSlotId slot = take(*e, std::nullopt, depth, std::nullopt);
    e->heir_of = owner;
    return slot;
  }
  if (own != nullptr && may_rewrite(*own)) return take(*own, key, depth, owner);
  if (own != nullptr) own->owner.reset();  // kept as a plain snapshot
  Entry* e = victim();
  if (e == nullptr) return std::nullopt;
  return take(*e, key, depth, owner);
}

void StateSnapshotCache::fulfil(StateSlotId slot, const BlockKey& key) {
  Entry& e = entry_in(slot);
  MET_CHECK(e.pending, "state snapshot slot {} fulfilled but not pending", slot.value());
  e.pending = false;
  const std::optional<SeqId> heir_of = e.heir_of;
  e.heir_of.reset();
  if (entry_of(key) != nullptr) {
    clear(e);
    return;
  }
  e.key = key;
  if (!heir_of.has_value()) return;
  // It supersedes the entry its sequence owned, which goes (or stays plain
  // while something pins it).
  if (Entry* old = owned_by(*heir_of); old != nullptr && old != &e) {
    old->owner.reset();
    if (old->pins == 0) clear(*old);
  }
  e.owner = heir_of;
}

void StateSnapshotCache::cancel(StateSlotId slot) {
  Entry& e = entry_in(slot);
  MET_CHECK(e.pending, "state snapshot slot {} cancelled but not pending", slot.value());
  clear(e);
}

void StateSnapshotCache::disown(SeqId owner, bool drop) {
  Entry* e = owned_by(owner);
  if (e == nullptr) return;
  e->owner.reset();
  if (drop && may_rewrite(*e)) clear(*e);
}

void StateSnapshotCache::erase(const BlockKey& key) {
  Entry* e = entry_of(key);
  if (e != nullptr && may_rewrite(*e)) clear(*e);
}

StateSlotId StateSnapshotCache::pin(const BlockKey& key) {
  Entry* e = entry_of(key);
  MET_CHECK(e != nullptr, "pinning a state snapshot that is not cached");
  e->last_used = ++clock_;
  ++e->pins;
  return e->slot;
}

void StateSnapshotCache::unpin(StateSlotId slot) {
  Entry& e = entry_in(slot);
  MET_CHECK(e.pins > 0, "state snapshot slot {} unpinned more than pinned", slot.value());
  --e.pins;
}

}  // namespace met
