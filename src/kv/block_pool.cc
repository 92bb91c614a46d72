// BlockPool's bookkeeping. Tested by tests/kv/block_pool_test.cc.
#include "kv/block_pool.h"

#include "core/check.h"

namespace met {

BlockPool::BlockPool(int32_t num_blocks) : index_(&index_memory_) {
  MET_CHECK(num_blocks >= 1, "BlockPool needs at least one block, got {}", num_blocks);
  const size_t n = static_cast<size_t>(num_blocks);
  ref_counts_.assign(n, 0);
  keys_.assign(n, std::nullopt);
  free_.reserve(n);
  for (int32_t b = num_blocks - 1; b >= 0; --b) free_.push_back(b);  // block 0 is handed out first
  lru_prev_.assign(n + 1, num_blocks);
  lru_next_.assign(n + 1, num_blocks);
  // At most num_blocks keys exist at once: with this many buckets the index
  // never rehashes, and after one round of nodes through the pool resource,
  // inserting a key reuses a node instead of allocating one.
  index_.reserve(n);
  for (int32_t b = 0; b < num_blocks; ++b) {
    index_.emplace(BlockKey{.lo = static_cast<uint64_t>(b)}, BlockId(b));
  }
  index_.clear();
}

int32_t BlockPool::checked_index(BlockId block) const {
  MET_CHECK(block.value() >= 0 && block.value() < num_blocks(), "block {} is not in the pool of {} blocks",
            block.value(), num_blocks());
  return block.value();
}

void BlockPool::lru_push_back(int32_t b) {
  const int32_t head = num_blocks();
  const int32_t last = lru_prev_[head];
  lru_next_[last] = b;
  lru_prev_[b] = last;
  lru_next_[b] = head;
  lru_prev_[head] = b;
  ++num_evictable_;
}

void BlockPool::lru_unlink(int32_t b) {
  lru_next_[lru_prev_[b]] = lru_next_[b];
  lru_prev_[lru_next_[b]] = lru_prev_[b];
  lru_prev_[b] = lru_next_[b] = b;
  --num_evictable_;
}

std::optional<BlockId> BlockPool::allocate() {
  int32_t b;
  if (!free_.empty()) {
    b = free_.back();
    free_.pop_back();
  } else if (num_evictable_ > 0) {
    b = lru_next_[num_blocks()];
    lru_unlink(b);
    index_.erase(*keys_[b]);
    if (event_sink_ != nullptr) event_sink_->block_removed(*keys_[b]);
    keys_[b].reset();
  } else {
    return std::nullopt;
  }
  ref_counts_[b] = 1;
  return BlockId(b);
}

bool BlockPool::allocate_n(int32_t n, std::vector<BlockId>& out) {
  MET_DCHECK(n >= 0, "allocate_n of {} blocks", n);
  if (n > num_free()) return false;
  for (int32_t i = 0; i < n; ++i) out.push_back(*allocate());
  return true;
}

void BlockPool::retain(BlockId block) {
  const int32_t b = checked_index(block);
  if (ref_counts_[b] == 0) {
    MET_CHECK(keys_[b].has_value(), "retain of block {}, which is free", b);
    lru_unlink(b);
  }
  ++ref_counts_[b];
}

void BlockPool::release(BlockId block) {
  const int32_t b = checked_index(block);
  MET_CHECK(ref_counts_[b] > 0, "release of block {}, which holds no reference", b);
  if (--ref_counts_[b] > 0) return;
  if (keys_[b]) {
    lru_push_back(b);
  } else {
    free_.push_back(b);
  }
}

void BlockPool::release_all(std::span<const BlockId> blocks) {
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) release(*it);
}

int32_t BlockPool::ref_count(BlockId block) const { return ref_counts_[checked_index(block)]; }

bool BlockPool::set_key(BlockId block, const BlockKey& key) {
  const int32_t b = checked_index(block);
  MET_CHECK(ref_counts_[b] > 0, "set_key on block {}, which is not in use", b);
  if (keys_[b]) return false;
  if (!index_.try_emplace(key, block).second) return false;
  keys_[b] = key;
  return true;
}

std::optional<BlockId> BlockPool::find(const BlockKey& key) const {
  const auto it = index_.find(key);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

std::optional<BlockKey> BlockPool::key_of(BlockId block) const { return keys_[checked_index(block)]; }

void BlockPool::append_keys(std::vector<BlockKey>& out) const {
  for (const auto& [key, block] : index_) out.push_back(key);
}

}  // namespace met
