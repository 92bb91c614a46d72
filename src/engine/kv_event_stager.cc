// KvEventStager. Tested by tests/engine/kv_event_publisher_test.cc.
#include "engine/kv_event_stager.h"

#include <algorithm>
#include <chrono>

#include "core/check.h"

namespace met {

void KvEventStager::block_stored(const BlockKey& key, const std::optional<BlockKey>& parent,
                                 std::span<const TokenId> tokens, uint64_t adapter) {
  MET_DCHECK(tokens.size() == static_cast<size_t>(kKvBlockTokens), "a stored block of {} tokens", tokens.size());
  KvBlockStored e;
  e.block_hash = external_block_hash(key);
  if (parent) e.parent_hash = external_block_hash(*parent);
  std::copy_n(tokens.begin(), kKvBlockTokens, e.token_ids.begin());
  if (adapter != 0) e.lora_id = adapter;
  staged_.emplace_back(e);
}

void KvEventStager::block_removed(const BlockKey& key) {
  staged_.emplace_back(KvBlockRemoved{.block_hash = external_block_hash(key)});
}

void KvEventStager::all_blocks_cleared() { staged_.emplace_back(KvAllBlocksCleared{}); }

bool KvEventStager::take(KvEventBatch& out) {
  if (staged_.empty()) return false;
  const auto since_epoch = std::chrono::system_clock::now().time_since_epoch();
  out.ts = std::chrono::duration<double>(since_epoch).count();
  out.events.clear();
  out.events.swap(staged_);
  return true;
}

}  // namespace met
