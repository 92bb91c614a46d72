// SeqState (the reference's name): a sequence's KV side: its tokens, how many
// of them have KV in the cache, the blocks that hold it, and its row in the
// scheduler's `active` list. KvManager (kv_manager.h) changes it; the
// scheduler reads it.
// Invariants: seq_len <= tokens.size(); block_table covers at least seq_len
// positions (entry b holds positions [16b, 16b + 15]); its first
// num_released_blocks entries are kReleasedBlock (blocks behind every
// attention window, given back: kv_block.h's blocks_behind_window) and each
// entry after them is a live block holding one pool reference.
// Threading: engine thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "backend/lora_adapter.h"

#include "core/ids.h"
#include "kv/block_key.h"

namespace met {

struct SeqState {
  SeqId id;
  std::vector<TokenId> tokens;       // prompt, then output tokens
  int32_t seq_len = 0;               // leading tokens whose KV is in the cache
  std::vector<BlockId> block_table;  // references held on these blocks, after the released ones
  int32_t num_released_blocks = 0;   // leading entries that are kReleasedBlock
  int32_t slot_idx = 0;              // row in `active` (CompactSlot keeps it so)
  bool owns_slot = true;             // false after DetachSlot
  CacheSalt salt;
  // Models with recurrent layers: the device slot holding this sequence's
  // conv and SSM state while it runs (KvManager::acquire_state_slot); given
  // back with its blocks by ReleaseSeq.
  std::optional<StateSlotId> state_slot;
  // Admitted from a cached state snapshot (hybrid prefix cache): the
  // snapshot slot its first step restores from, pinned until then.
  std::optional<StateSlotId> restore_from;
  // The LoRA adapter its rows run with (null: the base model; salt.adapter
  // is its id), and the device's adapter slot holding it while it runs
  // (KvManager::acquire_adapter_slot; given back with its blocks by
  // ReleaseSeq); -1 while it holds none.
  std::shared_ptr<const LoraAdapter> adapter;
  int32_t adapter_slot = -1;
};

}  // namespace met
