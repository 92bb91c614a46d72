// MaskCache: list + index LRU; eviction reuses the evicted mask's storage.
// Tested by tests/grammar/mask_cache_test.cc.
#include "grammar/mask_cache.h"

#include <algorithm>

#include "core/check.h"

namespace met {

std::span<const uint64_t> MaskCache::find(uint32_t state) {
  auto it = index_.find(state);
  if (it == index_.end()) return {};
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->mask;
}

void MaskCache::insert(uint32_t state, std::span<const uint64_t> mask) {
  MET_CHECK(mask.size() == words_, "mask of {} words, cache holds {}", mask.size(), words_);
  if (capacity_ == 0) return;
  auto it = index_.find(state);
  if (it != index_.end()) {
    std::copy(mask.begin(), mask.end(), it->second->mask.begin());
    lru_.splice(lru_.begin(), lru_, it->second);
    return;
  }
  if (index_.size() >= capacity_) {
    index_.erase(lru_.back().state);
    lru_.splice(lru_.begin(), lru_, std::prev(lru_.end()));
    lru_.front().state = state;
  } else {
    lru_.push_front({state, std::vector<uint64_t>(words_)});
  }
  std::copy(mask.begin(), mask.end(), lru_.front().mask.begin());
  index_.emplace(state, lru_.begin());
}

}  // namespace met
