// KvManager: the scheduler's KV bookkeeping over the block pool and the
// prefix cache (DESIGN.md, kv/): reserve, match, publish, rollback, release,
// slot moves, and the block I/O of swapping. The scheduler decides; it states
// its bookkeeping as Effects, and they are applied here and nowhere else.
// Invariants: a live block id in a SeqState's table holds one reference of
// this pool; released entries (kReleasedBlock, the table's leading
// num_released_blocks) hold none and are never retained, released, keyed,
// saved or handed to the prefix cache; ReleaseSeq drops every live one (after
// registering full blocks when asked) and leaves the table empty; a match
// always leaves one token to compute and maps only onto live blocks.
// Models with recurrent layers (DeviceInfo::num_state_slots > 0): a running
// sequence holds one state slot (acquire_state_slot), which ReleaseSeq gives
// back with its blocks; a spill image carries the slot's bytes after the
// blocks. A cached prefix is reused only as deep as a state snapshot of it
// exists (a block's KV is not enough to resume: the recurrent state at its
// end is needed too): prefill steps snapshot the state every
// `snapshot_interval_blocks` blocks of a prompt and at its last full block,
// and decode steps every quarter interval their output crosses (one rolling
// snapshot per sequence, rekeyed as it goes), into the device's snapshot
// slots (StateSnapshotCache, LRU); a sequence admitted from one restores it
// in its first step. A snapshot whose last block leaves the prefix cache is
// dropped with it. Without snapshot slots no prefix is reused.
// LoRA adapters: a running sequence with an adapter holds a reference on
// the device's adapter slot holding it (acquire_adapter_slot), which
// ReleaseSeq gives back with its blocks (adapter_slot_pool.h).
// Threading: engine thread only. Tested by tests/kv/kv_manager_test.cc.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>
#include <variant>
#include <optional>

#include "backend/device.h"
#include "core/status.h"
#include "kv/adapter_slot_pool.h"
#include "kv/block_pool.h"
#include "kv/kv_seq.h"
#include "kv/prefix_cache.h"
#include "kv/state_slot_pool.h"
#include "kv/state_snapshot_cache.h"
#include "kv/spill_io.h"

namespace met {

// Bookkeeping effects on a sequence's KV side, applied by KvManager::apply.
struct ReleaseSeq {
  SeqState* seq = nullptr;
  bool cache = false;       // register the full blocks in the prefix cache first
  const char* what = "";    // who released it, for logs
};
struct CompactSlot {
  SeqState* seq = nullptr;  // a row that moved to index `target` of `active`
  int32_t target = 0;
};
struct DetachSlot {
  SeqState* seq = nullptr;  // gives up its slot so that freeing it cannot release the slot
};
struct Rollback {
  SeqState* seq = nullptr;  // gives back blocks reserved past what its tokens need
};
struct PublishPrefix {
  SeqState* seq = nullptr;  // its full computed blocks enter the prefix cache; it keeps them
};
// The table's first `num_blocks` entries give back their blocks and become
// kReleasedBlock (entries released before stay so): the scheduler states it
// when no attention window reaches them any more (blocks_behind_window). A
// keyed block stays findable in the prefix cache (evictable) as any other.
// REQUIRES: num_blocks * kKvBlockTokens <= seq_len (only computed blocks).
struct ReleaseBehindWindow {
  SeqState* seq = nullptr;
  int32_t num_blocks = 0;
};
using Effect = std::variant<ReleaseSeq, CompactSlot, DetachSlot, Rollback, PublishPrefix, ReleaseBehindWindow>;

// kLater: too few free blocks now (nothing changed); kNever: more than the
// whole pool.
enum class Admit { kNow, kLater, kNever };

class KvManager {
 public:
  // A pool of device.info().num_kv_blocks blocks; `device` holds their bytes
  // (read and written only by save_blocks and restore_blocks). Its blocks are
  // kKvBlockTokens positions (kv/kv_block.h): Scheduler::create refuses a
  // device whose DeviceInfo::kv_block_tokens differs.
  // Hybrid models: a state snapshot every `snapshot_interval_blocks` blocks
  // of a prompt, into the device's num_state_snapshot_slots slots.
  explicit KvManager(Device& device, int32_t snapshot_interval_blocks = kDefaultSnapshotBlocks);
  static constexpr int32_t kDefaultSnapshotBlocks = 16;
  // The pool keeps a pointer to this manager's eviction observer.
  KvManager(const KvManager&) = delete;
  KvManager& operator=(const KvManager&) = delete;

  KvShape kv_shape() const { return shape_; }
  int32_t num_blocks() const { return pool_.num_blocks(); }
  int32_t num_free_blocks() const { return pool_.num_free(); }
  int32_t num_blocks_in_use() const { return pool_.num_in_use(); }
  // Free blocks that hold no cached prefix (allocation takes these before
  // it evicts one).
  int32_t num_unkeyed_free_blocks() const { return pool_.num_free() - pool_.num_evictable(); }
  // Live blocks of `seq`'s table that no other sequence references.
  int32_t num_sole_blocks(const SeqState& seq) const;
  // Whether no sequence references `block` (it is cached and evictable).
  bool is_idle(BlockId block) const { return pool_.ref_count(block) == 0; }
  const PrefixCache& prefix_cache() const { return prefix_; }
  // The observer of the prefix cache's keys (kv/kv_event_sink.h; null: none).
  void set_event_sink(KvEventSink* sink) { evictions_.external = sink; }
  // Recurrent-state slots for running sequences (0 for a model without
  // recurrent layers), and those holding cached snapshots.
  int32_t num_state_slots() const { return state_slots_.num_slots(); }
  int32_t num_state_slots_in_use() const { return state_slots_.num_in_use(); }
  int32_t num_state_snapshots() const { return snapshots_.size(); }
  int32_t num_state_snapshot_slots() const { return snapshots_.capacity(); }
  // Snapshots taken by a step launched ahead whose row is not validated yet.
  int32_t num_state_snapshots_pending() const { return snapshots_.num_pending(); }
  // Tokens between state snapshots of a prompt (0: none are taken).
  int32_t snapshot_interval_tokens() const { return snapshot_interval_blocks_ * kKvBlockTokens; }
  // Tokens between a decoding sequence's rolling snapshots: a quarter of the
  // interval, at least a block (each copies the whole state, 18.8 MiB a
  // sequence on qwen35 medium, so one every 64 tokens by default; a next
  // turn re-prefills at most this many tokens less one).
  int32_t decode_snapshot_tokens() const {
    return snapshot_interval_blocks_ == 0 ? 0 : std::max(1, snapshot_interval_blocks_ / 4) * kKvBlockTokens;
  }

  // The restore the first step of a sequence admitted from a state snapshot
  // makes (once: it unpins the snapshot); nullopt for any other.
  std::optional<StateCopy> take_restore(SeqState& seq);
  // The snapshot a step that computes seq's prompt tokens up to `num_tokens`
  // makes when one is due there (a multiple of the interval, or the last
  // full block of a prompt of `prompt_len` tokens, last_full_snapshot) and
  // not cached yet; the snapshot is registered at once (the step is launched
  // before any later one can restore it). nullopt otherwise.
  std::optional<StateCopy> prompt_snapshot_due(const SeqState& seq, int32_t num_tokens, int32_t prompt_len);
  // The block boundary (in tokens) a prompt chunk from seq.seq_len stops at:
  // the next multiple of the interval or the prompt's last full block; 0
  // when no snapshot is due before `prompt_len`.
  int32_t next_prompt_snapshot(const SeqState& seq, int32_t prompt_len) const;
  // The last block boundary before the end of a prompt of `prompt_len`
  // tokens (so that a repeat of it, which must compute a token, reuses all
  // but that token's block), where its prefill snapshots the state; 0 (none)
  // for a prompt shorter than the interval, whose tail would cost a step of
  // its own out of a short prefill (its decode steps' rolling snapshot
  // serves its next turn).
  int32_t last_full_snapshot(int32_t prompt_len) const;
  // A decode step whose row for `seq` computes its tokens up to `num_tokens`
  // (its input, seq.tokens[num_tokens - 1], committed): seq's rolling
  // snapshot there when num_tokens is a multiple of decode_snapshot_tokens(),
  // registered at once.
  std::optional<StateCopy> decode_snapshot_due(const SeqState& seq, int32_t num_tokens);
  // The same for a step launched ahead of its input (FeedFromRow): the
  // snapshot is pending until fulfil_snapshot (the input committed as
  // seq.tokens[num_tokens - 1]) or cancel_snapshot (the row was dropped).
  std::optional<StateCopy> decode_snapshot_ahead(const SeqState& seq, int32_t num_tokens);
  void fulfil_snapshot(StateSlotId slot, const SeqState& seq, int32_t num_tokens);
  void cancel_snapshot(StateSlotId slot) { snapshots_.cancel(slot); }
  // A step is being built (no snapshot reuses a slot given this step).
  void begin_step() { snapshots_.new_step(); }

  // Gives `seq` a state slot when the model keeps recurrent state and it has
  // none; false when every slot is held (nothing changed). True for a model
  // without recurrent state.
  [[nodiscard]] bool acquire_state_slot(SeqState& seq);

  // Gives `seq` a reference on an adapter slot holding seq.adapter when it
  // has an adapter and no slot (true: it holds one, or needs none); false
  // when every slot is used by other adapters (nothing changed); an error
  // when the device refuses the adapter.
  Result<bool> acquire_adapter_slot(SeqState& seq);
  // The adapter slots, for admission plans (AdapterSlotPool::plan_take).
  AdapterSlotPool& adapter_slots() { return adapter_slots_; }
  const AdapterSlotPool& adapter_slots() const { return adapter_slots_; }

  void apply(const Effect& effect);

  // Grows `seq`'s block table to cover `num_tokens` positions; kNever when
  // its live blocks (those not released) would outnumber the pool.
  Admit reserve(SeqState& seq, int32_t num_tokens);
  // Reuses the longest cached chain for seq.tokens, leaving at least one
  // token to compute. REQUIRES: an empty table. Sets seq.seq_len to the hit.
  PrefixMatch match_prefix(SeqState& seq);
  // match_prefix in two halves, so a decision can look before it takes:
  // find_prefix appends the chain match_prefix would reuse to `blocks` and
  // changes nothing; adopt_prefix takes it (retains the blocks, sets
  // seq_len) and counts the query. REQUIRES for adopt: an empty table, and
  // `blocks` found by find_prefix for seq with no allocation since.
  PrefixMatch find_prefix(const SeqState& seq, std::vector<BlockId>& blocks) const;
  PrefixMatch adopt_prefix(SeqState& seq, std::span<const BlockId> blocks);

  // The KV of seq's first `num_blocks` table entries into `image` (its
  // buffer reused), released ones left out: the image holds the live blocks
  // [seq.num_released_blocks, num_blocks), num_blocks - num_released_blocks.
  // REQUIRES: num_released_blocks <= num_blocks <= the table's size.
  Status save_blocks(const SeqState& seq, int32_t num_blocks, SpillImage& image);
  // With recurrent state, the image ends with seq's state slot: the state
  // after seq.seq_len tokens.
  // Rebuilds the table of `seq` (empty) from an image save_blocks wrote of a
  // table with `num_released_blocks` released entries: those entries come
  // back released, then image.num_blocks blocks are allocated and the image
  // written into them; with recurrent state a slot is acquired and the
  // state written into it as the state after `seq_len` tokens, and
  // seq.seq_len becomes seq_len. On error the table is empty and nothing
  // stays allocated. Too few free blocks (or slots) is an error here: the
  // caller checks num_free_blocks() first.
  Status restore_blocks(SeqState& seq, const SpillImage& image, int32_t num_released_blocks, int32_t seq_len);

 private:
  // Keys the full blocks among seq's computed tokens in the prefix cache
  // (none once a leading block is released: a chain starts at block 0).
  void publish(const SeqState& seq);
  void release_seq(const ReleaseSeq& e);
  void rollback(SeqState& seq);
  void release_behind_window(const ReleaseBehindWindow& e);
  // The longest prefix a match may reuse, in blocks (none with recurrent
  // state and no snapshots).
  int32_t max_match_blocks(const SeqState& seq) const;
  // The key of seq's prefix of `num_blocks` blocks. REQUIRES: num_blocks > 0.
  BlockKey prefix_key(const SeqState& seq, int32_t num_blocks) const;
  Status restore_state(SeqState& seq, const SpillImage& image, int32_t seq_len);
  // Whether a decode row of seq computing its tokens up to num_tokens takes
  // its rolling snapshot there.
  bool decode_snapshot_at(const SeqState& seq, int32_t num_tokens) const;

  // Told by the pool of every key it drops: the snapshot of that prefix goes
  // too; everything is passed on to the engine's observer.
  struct EvictionObserver final : KvEventSink {
    StateSnapshotCache* snapshots = nullptr;
    KvEventSink* external = nullptr;
    void block_stored(const BlockKey& key, const std::optional<BlockKey>& parent, std::span<const TokenId> tokens,
                      uint64_t adapter) override;
    void block_removed(const BlockKey& key) override;
    void all_blocks_cleared() override;
  };

  Device& device_;
  KvShape shape_;
  BlockPool pool_;
  PrefixCache prefix_;
  StateSlotPool state_slots_;
  AdapterSlotPool adapter_slots_;
  StateSnapshotCache snapshots_;
  int32_t snapshot_interval_blocks_ = 0;  // 0: no snapshots
  EvictionObserver evictions_;
  mutable std::vector<BlockKey> scratch_keys_;
};

}  // namespace met
