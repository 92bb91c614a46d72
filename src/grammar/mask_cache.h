// MaskCache: a bounded LRU of token masks keyed by GrammarDfa state id, since
// JSON generation revisits the same few states (inside a string, after a
// comma) at almost every step. A state id names the matcher state exactly,
// so a hit is the mask that a fresh computation would give.
// Invariants: at most `capacity` entries; every mask has `words` words.
// Threading: one thread at a time (owned by one GrammarMatcher).
// Tested by tests/grammar/mask_cache_test.cc.
#pragma once

#include <cstdint>
#include <list>
#include <span>
#include <unordered_map>
#include <vector>

namespace met {

class MaskCache {
 public:
  MaskCache(size_t capacity, size_t words) : capacity_(capacity), words_(words) {}

  // The cached mask of `state`, now most recently used; empty on a miss.
  std::span<const uint64_t> find(uint32_t state);
  // Stores `mask` for `state`, evicting the least recently used entry.
  void insert(uint32_t state, std::span<const uint64_t> mask);
  size_t size() const { return index_.size(); }

 private:
  struct Entry {
    uint32_t state;
    std::vector<uint64_t> mask;
  };
  size_t capacity_;
  size_t words_;
  std::list<Entry> lru_;  // front: most recent
  std::unordered_map<uint32_t, std::list<Entry>::iterator> index_;
};

}  // namespace met
