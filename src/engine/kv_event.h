// KvEvent: one change to the set of cached KV blocks as prefix-aware routers
// read it (vLLM's KV event model: BlockStored, BlockRemoved,
// AllBlocksCleared), and KvEventBatch, the events of one engine tick. Blocks
// are named by external_block_hash (kv/block_key.h), a 64-bit integer.
// Threading: plain values; staged on the engine thread and encoded on the
// publisher's thread. Tested by tests/engine/kv_event_codec_test.cc.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

#include "core/ids.h"
#include "kv/kv_block.h"

namespace met {

// A block newly cached: its hash, its parent's (nullopt for the first block
// of a sequence), its tokens and its LoRA adapter id (nullopt: base model).
struct KvBlockStored {
  uint64_t block_hash = 0;
  std::optional<uint64_t> parent_hash;
  std::array<TokenId, kKvBlockTokens> token_ids{};
  std::optional<uint64_t> lora_id;
};

// A block no longer cached (evicted).
struct KvBlockRemoved {
  uint64_t block_hash = 0;
};

// Nothing is cached (sent first, so a router forgets what a replica held
// before it restarted).
struct KvAllBlocksCleared {};

using KvEvent = std::variant<KvBlockStored, KvBlockRemoved, KvAllBlocksCleared>;

struct KvEventBatch {
  double ts = 0;  // seconds since the Unix epoch, when the batch was staged
  std::vector<KvEvent> events;
};

}  // namespace met
