// StateSnapshotCache. Tested by tests/kv/state_snapshot_cache_test.cc.
#include "kv/state_snapshot_cache.h"

#include "core/check.h"

namespace met {

StateSnapshotCache::StateSnapshotCache(std::vector<StateSlotId> slots) {
  entries_.reserve(slots.size());
  for (StateSlotId s : slots) entries_.push_back(Entry{s, std::nullopt, 0, 0});
}

int32_t StateSnapshotCache::size() const {
  int32_t n = 0;
  for (const Entry& e : entries_) n += e.key.has_value() ? 1 : 0;
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

std::optional<StateSlotId> StateSnapshotCache::find(const BlockKey& key) const {
  const Entry* e = entry_of(key);
  return e != nullptr ? std::optional(e->slot) : std::nullopt;
}

std::optional<StateSlotId> StateSnapshotCache::insert(const BlockKey& key) {
  if (entry_of(key) != nullptr) return std::nullopt;
  Entry* victim = nullptr;
  for (Entry& e : entries_) {
    if (!e.key.has_value()) {
      victim = &e;
      break;
    }
    const bool evictable = e.pins == 0 && e.last_used <= fence_;
    if (evictable && (victim == nullptr || e.last_used < victim->last_used)) victim = &e;
  }
  if (victim == nullptr) return std::nullopt;
  victim->key = key;
  victim->last_used = ++clock_;
  victim->pins = 0;
  return victim->slot;
}

StateSlotId StateSnapshotCache::pin(const BlockKey& key) {
  Entry* e = entry_of(key);
  MET_CHECK(e != nullptr, "pinning a state snapshot that is not cached");
  e->last_used = ++clock_;
  ++e->pins;
  return e->slot;
}

void StateSnapshotCache::unpin(StateSlotId slot) {
  for (Entry& e : entries_) {
    if (e.slot != slot) continue;
    MET_CHECK(e.pins > 0, "state snapshot slot {} unpinned more than pinned", slot.value());
    --e.pins;
    return;
  }
  MET_CHECK(false, "state slot {} is not a snapshot slot", slot.value());
}

}  // namespace met
