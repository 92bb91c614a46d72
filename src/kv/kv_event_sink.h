// KvEventSink: the narrow hook through which the prefix cache tells an
// observer (the KV event publisher, engine/kv_event_stager.h) that a block
// got a key (stored), lost it to eviction (removed), or that every key is
// gone (cleared). The pool and the prefix cache hold a nullable pointer to
// one; with none set, nothing is called and nothing costs.
// Invariants: block_stored is called once per key that newly names a block,
// block_removed once per key dropped from the index, in the order they
// happen; a key is stored before it is removed.
// Threading: called on the engine thread (the pool's thread); implementations
// must not block or lock per call. Tested through tests/kv/block_pool_test.cc
// and tests/kv/prefix_cache_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "core/ids.h"
#include "kv/block_key.h"

namespace met {

class KvEventSink {
 public:
  virtual ~KvEventSink() = default;
  // `key` now names a cached block holding `tokens` (kKvBlockTokens of them),
  // chained on `parent` (nullopt: the first block of a sequence), cached for
  // adapter id `adapter` (0: the base model).
  virtual void block_stored(const BlockKey& key, const std::optional<BlockKey>& parent,
                            std::span<const TokenId> tokens, uint64_t adapter) = 0;
  // `key` names no block any more (its block was evicted for reuse).
  virtual void block_removed(const BlockKey& key) = 0;
  // No key names any block.
  virtual void all_blocks_cleared() = 0;
};

}  // namespace met
