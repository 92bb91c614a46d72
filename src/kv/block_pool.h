// BlockPool: the KV cache's blocks, each free, in use (referenced by one or
// more sequences) or evictable (unreferenced but keyed in the prefix cache,
// kept on an LRU until its space is needed), and the index from BlockKey to
// the block that holds it.
// Invariants: every block is in exactly one of the three states; a free block
// has no key; a block has at most one key and a key names at most one block
// (the first registration wins); num_free() + num_in_use() == num_blocks().
// Every operation is O(1) and none allocates after construction (the free
// list is a stack, the LRU an intrusive list in arrays, the index's nodes come
// from a pool warmed to num_blocks entries).
// Threading: engine thread only (one thread at a time, no locks).
// Tested by tests/kv/block_pool_test.cc.
#pragma once

#include <cstdint>
#include <memory_resource>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "core/ids.h"
#include "kv/block_key.h"
#include "kv/kv_event_sink.h"

namespace met {

class BlockPool {
 public:
  // REQUIRES: num_blocks >= 1. All blocks start free.
  explicit BlockPool(int32_t num_blocks);
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  int32_t num_blocks() const { return static_cast<int32_t>(ref_counts_.size()); }
  // Blocks allocate() can hand out now: free + evictable.
  int32_t num_free() const { return static_cast<int32_t>(free_.size()) + num_evictable_; }
  // Keyed blocks with no reference (the cache's LRU).
  int32_t num_evictable() const { return num_evictable_; }
  // Blocks with a reference.
  int32_t num_in_use() const { return num_blocks() - num_free(); }

  // A block with reference count 1: an unkeyed free block if there is one,
  // else the least recently released evictable block, whose key is dropped
  // from the index. nullopt when every block is in use.
  std::optional<BlockId> allocate();
  // n blocks appended to `out`, or none at all (returns false, `out`
  // unchanged) when fewer than n are free. REQUIRES: n >= 0.
  bool allocate_n(int32_t n, std::vector<BlockId>& out);

  // Adds a reference. A block that was evictable leaves the LRU (a cache hit
  // revives it). REQUIRES: the block is in use or evictable.
  void retain(BlockId block);
  // Drops a reference. At zero: a keyed block becomes evictable (the most
  // recently used end of the LRU), an unkeyed one free.
  // REQUIRES: ref_count(block) > 0.
  void release(BlockId block);
  // release() of each, last block first (as vLLM frees a table): free
  // blocks are handed out again in their table's order, so a new sequence's
  // rows sit in ascending runs the CPU KV pool's reads stream through
  // (kv_cache.h), and of a cached prefix the tail becomes evictable before
  // the head that every longer match needs.
  void release_all(std::span<const BlockId> blocks);
  int32_t ref_count(BlockId block) const;

  // Registers a full block under `key`. Returns false and changes nothing
  // when the key already names another block (the first registration wins)
  // or this block already has a key. REQUIRES: the block is in use.
  bool set_key(BlockId block, const BlockKey& key);
  std::optional<BlockId> find(const BlockKey& key) const;
  std::optional<BlockKey> key_of(BlockId block) const;
  // Every key that names a block now, appended to `out` in no set order.
  void append_keys(std::vector<BlockKey>& out) const;

  // The observer told of keys dropped by eviction (null: none). The prefix
  // cache tells it of keys it sets. REQUIRES: `sink` outlives the pool or is
  // replaced first.
  void set_event_sink(KvEventSink* sink) { event_sink_ = sink; }
  KvEventSink* event_sink() const { return event_sink_; }

 private:
  // The block's index; CHECKs that it names a block of this pool.
  int32_t checked_index(BlockId block) const;
  void lru_push_back(int32_t b);  // most recently used end
  void lru_unlink(int32_t b);

  std::vector<int32_t> ref_counts_;
  std::vector<std::optional<BlockKey>> keys_;
  std::vector<int32_t> free_;  // stack of free (unkeyed, unreferenced) blocks
  // A circular doubly-linked list over blocks; entry num_blocks is its head,
  // so lru_next_[head] is the least recently released evictable block.
  std::vector<int32_t> lru_prev_;
  std::vector<int32_t> lru_next_;
  int32_t num_evictable_ = 0;
  KvEventSink* event_sink_ = nullptr;
  // Declared before index_, which allocates its nodes from it.
  std::pmr::unsynchronized_pool_resource index_memory_;
  std::pmr::unordered_map<BlockKey, BlockId, BlockKeyHash> index_;
};

}  // namespace met
