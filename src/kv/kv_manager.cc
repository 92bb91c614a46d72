// KvManager. Tested by tests/kv/kv_manager_test.cc.
#include "kv/kv_manager.h"

#include <algorithm>
#include <span>

#include "backend/step_plan.h"
#include "core/check.h"
#include "kv/kv_block.h"

namespace met {
namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;  // clang 14 deduces no aggregate templates

KvShape shape_of(const DeviceInfo& di) {
  KvShape s;
  s.dtype = di.kv_dtype;
  s.num_layers = di.num_layers;
  s.num_kv_heads = di.num_kv_heads;
  s.head_dim = di.head_dim;
  s.block_bytes = di.kv_block_bytes;
  s.state_bytes = di.num_state_slots > 0 ? di.state_slot_bytes : 0;
  return s;
}

// The device's last num_state_snapshot_slots slots: the snapshot cache's.
std::vector<StateSlotId> snapshot_slots(const DeviceInfo& di) {
  std::vector<StateSlotId> slots;
  for (int32_t s = di.num_state_slots - di.num_state_snapshot_slots; s < di.num_state_slots; ++s) {
    slots.emplace_back(s);
  }
  return slots;
}

// Live entries of a table: those after its released ones.
std::span<const BlockId> live_blocks(const SeqState& seq) {
  return std::span<const BlockId>(seq.block_table).subspan(static_cast<size_t>(seq.num_released_blocks));
}

}  // namespace

KvManager::KvManager(Device& device, int32_t snapshot_interval_blocks)
    : device_(device),
      shape_(shape_of(device.info())),
      pool_(device.info().num_kv_blocks),
      prefix_(pool_),
      state_slots_(device.info().num_state_slots - device.info().num_state_snapshot_slots),
      adapter_slots_(device),
      snapshots_(snapshot_slots(device.info())) {
  MET_CHECK(snapshot_interval_blocks > 0, "a state snapshot every {} blocks", snapshot_interval_blocks);
  if (snapshots_.capacity() > 0) snapshot_interval_blocks_ = snapshot_interval_blocks;
  evictions_.snapshots = &snapshots_;
  pool_.set_event_sink(&evictions_);
}

void KvManager::EvictionObserver::block_stored(const BlockKey& key, const std::optional<BlockKey>& parent,
                                               std::span<const TokenId> tokens, uint64_t adapter) {
  if (external != nullptr) external->block_stored(key, parent, tokens, adapter);
}

void KvManager::EvictionObserver::block_removed(const BlockKey& key) {
  snapshots->erase(key);
  if (external != nullptr) external->block_removed(key);
}

void KvManager::EvictionObserver::all_blocks_cleared() {
  if (external != nullptr) external->all_blocks_cleared();
}

bool KvManager::acquire_state_slot(SeqState& seq) {
  if (state_slots_.num_slots() == 0 || seq.state_slot.has_value()) return true;
  seq.state_slot = state_slots_.acquire();
  return seq.state_slot.has_value();
}

Result<bool> KvManager::acquire_adapter_slot(SeqState& seq) {
  if (seq.adapter == nullptr || seq.adapter_slot >= 0) return true;
  if (adapter_slots_.num_slots() == 0) {
    return invalid_argument("adapter '{}': this server runs no adapters (--max-loras is 0)", seq.adapter->name);
  }
  MET_ASSIGN_OR_RETURN(std::optional<int32_t> slot, adapter_slots_.acquire(seq.adapter));
  if (!slot) return false;
  seq.adapter_slot = *slot;
  return true;
}

int32_t KvManager::max_match_blocks(const SeqState& seq) const {
  if (state_slots_.num_slots() > 0 && snapshot_interval_blocks_ == 0) return 0;
  const int32_t n = static_cast<int32_t>(seq.tokens.size());
  return n > 0 ? (n - 1) / kKvBlockTokens : 0;
}

void KvManager::publish(const SeqState& seq) {
  // A chain starts at block 0: past a released block nothing could be found.
  if (seq.num_released_blocks > 0) return;
  const int32_t n = std::min<int32_t>(seq.seq_len, static_cast<int32_t>(seq.tokens.size()));
  prefix_.register_blocks(seq.tokens, n, seq.block_table, seq.salt);
}

void KvManager::release_seq(const ReleaseSeq& e) {
  SeqState& seq = *e.seq;
  if (e.cache) publish(seq);
  pool_.release_all(live_blocks(seq));
  seq.block_table.clear();
  seq.num_released_blocks = 0;
  seq.seq_len = 0;
  if (seq.restore_from.has_value()) {
    snapshots_.unpin(*seq.restore_from);
    seq.restore_from.reset();
  }
  // Its last rolling snapshot stays cached (the conversation may go on)
  // when its blocks do, as a plain entry.
  snapshots_.disown(seq.id, /*drop=*/!e.cache);
  if (seq.state_slot.has_value()) {
    state_slots_.release(*seq.state_slot);
    seq.state_slot.reset();
  }
  if (seq.adapter_slot >= 0) {
    adapter_slots_.release(seq.adapter_slot);
    seq.adapter_slot = -1;
  }
}

void KvManager::rollback(SeqState& seq) {
  const auto keep = static_cast<size_t>(
      blocks_for_tokens(std::max<int32_t>(seq.seq_len, static_cast<int32_t>(seq.tokens.size()))));
  MET_DCHECK(keep >= static_cast<size_t>(seq.num_released_blocks), "seq {}: rollback into released blocks",
             seq.id.value());
  while (seq.block_table.size() > keep) {
    pool_.release(seq.block_table.back());
    seq.block_table.pop_back();
  }
}

void KvManager::release_behind_window(const ReleaseBehindWindow& e) {
  SeqState& seq = *e.seq;
  MET_DCHECK(int64_t{e.num_blocks} * kKvBlockTokens <= seq.seq_len,
             "seq {}: releasing {} blocks of which some are not computed ({} tokens are)", seq.id.value(),
             e.num_blocks, seq.seq_len);
  const int32_t end = std::min(e.num_blocks, static_cast<int32_t>(seq.block_table.size()));
  for (int32_t b = seq.num_released_blocks; b < end; ++b) {
    BlockId& entry = seq.block_table[static_cast<size_t>(b)];
    pool_.release(entry);
    entry = kReleasedBlock;
  }
  seq.num_released_blocks = std::max(seq.num_released_blocks, end);
}

void KvManager::apply(const Effect& effect) {
  std::visit(Overloaded{
                 [&](const ReleaseSeq& e) { release_seq(e); },
                 [&](const CompactSlot& e) { e.seq->slot_idx = e.target; },
                 [&](const PublishPrefix& e) { publish(*e.seq); },
                 [&](const DetachSlot& e) { e.seq->owns_slot = false; },
                 [&](const Rollback& e) { rollback(*e.seq); },
                 [&](const ReleaseBehindWindow& e) { release_behind_window(e); },
             },
             effect);
}

Admit KvManager::reserve(SeqState& seq, int32_t num_tokens) {
  const int32_t want = blocks_for_tokens(num_tokens);
  if (want - seq.num_released_blocks > pool_.num_blocks()) return Admit::kNever;
  const int32_t have = static_cast<int32_t>(seq.block_table.size());
  if (want <= have) return Admit::kNow;
  return pool_.allocate_n(want - have, seq.block_table) ? Admit::kNow : Admit::kLater;
}

PrefixMatch KvManager::match_prefix(SeqState& seq) {
  MET_CHECK(seq.block_table.empty() && seq.num_released_blocks == 0, "seq {}: prefix match over a non-empty table",
            seq.id.value());
  if (state_slots_.num_slots() > 0) {  // only as deep as a state snapshot: find, then take
    std::vector<BlockId> found;
    find_prefix(seq, found);
    return adopt_prefix(seq, found);
  }
  PrefixMatch m = prefix_.match(seq.tokens, seq.salt, max_match_blocks(seq), seq.block_table);
  seq.seq_len = m.num_tokens;
  return m;
}

PrefixMatch KvManager::find_prefix(const SeqState& seq, std::vector<BlockId>& blocks) const {
  const size_t first = blocks.size();
  if (state_slots_.num_slots() == 0) return prefix_.lookup(seq.tokens, seq.salt, max_match_blocks(seq), blocks);
  scratch_keys_.clear();
  prefix_.lookup(seq.tokens, seq.salt, max_match_blocks(seq), blocks, &scratch_keys_);
  const int32_t depth = snapshots_.deepest(scratch_keys_);
  blocks.resize(first + static_cast<size_t>(depth));
  return PrefixMatch{depth, depth * kKvBlockTokens};
}

PrefixMatch KvManager::adopt_prefix(SeqState& seq, std::span<const BlockId> blocks) {
  MET_CHECK(seq.block_table.empty() && seq.num_released_blocks == 0, "seq {}: prefix adopted over a non-empty table",
            seq.id.value());
  PrefixMatch m = prefix_.adopt(blocks, static_cast<int64_t>(seq.tokens.size()), seq.block_table);
  seq.seq_len = m.num_tokens;
  if (state_slots_.num_slots() > 0 && m.num_blocks > 0) {
    MET_CHECK(!seq.restore_from.has_value(), "seq {}: admitted twice from a snapshot", seq.id.value());
    seq.restore_from = snapshots_.pin(prefix_key(seq, m.num_blocks));
  }
  return m;
}

BlockKey KvManager::prefix_key(const SeqState& seq, int32_t num_blocks) const {
  chain_keys(std::span<const TokenId>(seq.tokens).first(static_cast<size_t>(num_blocks) * kKvBlockTokens), seq.salt,
             scratch_keys_);
  return scratch_keys_[static_cast<size_t>(num_blocks - 1)];
}

std::optional<StateCopy> KvManager::take_restore(SeqState& seq) {
  if (!seq.restore_from.has_value()) return std::nullopt;
  const StateCopy c{*seq.restore_from, *seq.state_slot};
  snapshots_.unpin(*seq.restore_from);
  seq.restore_from.reset();
  return c;
}

int32_t KvManager::next_prompt_snapshot(const SeqState& seq, int32_t prompt_len) const {
  const int32_t interval = snapshot_interval_tokens();
  if (interval == 0 || seq.seq_len >= prompt_len) return 0;
  const int32_t next_interval = (seq.seq_len / interval + 1) * interval;
  const int32_t last_full = last_full_snapshot(prompt_len);
  if (last_full > seq.seq_len && last_full < next_interval) return last_full;
  return next_interval <= prompt_len ? next_interval : 0;
}

int32_t KvManager::last_full_snapshot(int32_t prompt_len) const {
  const int32_t interval = snapshot_interval_tokens();
  // Strictly before the end: a repeat of the prompt must compute a token.
  const int32_t last_full = (prompt_len - 1) / kKvBlockTokens * kKvBlockTokens;
  return interval > 0 && last_full >= interval ? last_full : 0;
}

std::optional<StateCopy> KvManager::prompt_snapshot_due(const SeqState& seq, int32_t num_tokens,
                                                        int32_t prompt_len) {
  const int32_t interval = snapshot_interval_tokens();
  if (interval == 0 || num_tokens <= 0 || !seq.state_slot.has_value()) return std::nullopt;
  const bool at_interval = num_tokens % interval == 0;
  const bool at_last_full = num_tokens == last_full_snapshot(prompt_len);
  if (!at_interval && !at_last_full) return std::nullopt;
  const int32_t depth = num_tokens / kKvBlockTokens;
  const std::optional<StateSlotId> to = snapshots_.insert(prefix_key(seq, depth), depth);
  if (!to.has_value()) return std::nullopt;
  return StateCopy{*seq.state_slot, *to};
}

bool KvManager::decode_snapshot_at(const SeqState& seq, int32_t num_tokens) const {
  const int32_t every = decode_snapshot_tokens();
  return every > 0 && num_tokens > 0 && num_tokens % every == 0 && seq.state_slot.has_value();
}

std::optional<StateCopy> KvManager::decode_snapshot_due(const SeqState& seq, int32_t num_tokens) {
  if (!decode_snapshot_at(seq, num_tokens)) return std::nullopt;
  const int32_t depth = num_tokens / kKvBlockTokens;
  const std::optional<StateSlotId> to = snapshots_.insert_rolling(seq.id, prefix_key(seq, depth), depth);
  if (!to.has_value()) return std::nullopt;
  // At an interval boundary the snapshot is kept as a plain one; the next
  // boundary starts a new rolling entry.
  if (depth % snapshot_interval_blocks_ == 0) snapshots_.disown(seq.id, /*drop=*/false);
  return StateCopy{*seq.state_slot, *to};
}

std::optional<StateCopy> KvManager::decode_snapshot_ahead(const SeqState& seq, int32_t num_tokens) {
  if (!decode_snapshot_at(seq, num_tokens)) return std::nullopt;
  const std::optional<StateSlotId> to = snapshots_.insert_rolling(seq.id, std::nullopt, num_tokens / kKvBlockTokens);
  if (!to.has_value()) return std::nullopt;
  return StateCopy{*seq.state_slot, *to};
}

void KvManager::fulfil_snapshot(StateSlotId slot, const SeqState& seq, int32_t num_tokens) {
  MET_CHECK(num_tokens % kKvBlockTokens == 0 && num_tokens <= static_cast<int32_t>(seq.tokens.size()),
            "seq {}: a snapshot after {} of its {} tokens", seq.id.value(), num_tokens, seq.tokens.size());
  const int32_t depth = num_tokens / kKvBlockTokens;
  snapshots_.fulfil(slot, prefix_key(seq, depth));
  if (depth % snapshot_interval_blocks_ == 0) snapshots_.disown(seq.id, /*drop=*/false);
}

int32_t KvManager::num_sole_blocks(const SeqState& seq) const {
  int32_t n = 0;
  for (BlockId b : live_blocks(seq)) n += pool_.ref_count(b) == 1 ? 1 : 0;
  return n;
}

Status KvManager::save_blocks(const SeqState& seq, int32_t num_blocks, SpillImage& image) {
  MET_CHECK(seq.num_released_blocks <= num_blocks && num_blocks <= static_cast<int32_t>(seq.block_table.size()),
            "seq {}: saving {} of {} blocks ({} released)", seq.id.value(), num_blocks, seq.block_table.size(),
            seq.num_released_blocks);
  const int32_t first = seq.num_released_blocks;
  image.shape = shape_;
  image.num_blocks = num_blocks - first;
  const auto bb = static_cast<size_t>(shape_.block_bytes);
  const auto blocks_bytes = bb * static_cast<size_t>(image.num_blocks);
  image.bytes.resize(blocks_bytes + static_cast<size_t>(shape_.state_bytes));
  for (int32_t i = 0; i < image.num_blocks; ++i) {
    MET_RETURN_IF_ERROR(device_.read_kv_block(
        seq.block_table[static_cast<size_t>(first + i)],
        std::span<uint8_t>(image.bytes.data() + bb * static_cast<size_t>(i), bb)));
  }
  if (shape_.state_bytes == 0) return ok_status();
  MET_CHECK(seq.state_slot.has_value(), "seq {}: saving a recurrent model's sequence without a state slot",
            seq.id.value());
  return device_.read_state_slot(*seq.state_slot, seq.seq_len, std::span<uint8_t>(image.bytes).subspan(blocks_bytes));
}

Status KvManager::restore_blocks(SeqState& seq, const SpillImage& image, int32_t num_released_blocks,
                                 int32_t seq_len) {
  MET_CHECK(seq.block_table.empty() && seq.num_released_blocks == 0, "seq {}: restore over a non-empty table",
            seq.id.value());
  MET_CHECK(num_released_blocks >= 0, "seq {}: restoring after {} released blocks", seq.id.value(),
            num_released_blocks);
  seq.block_table.assign(static_cast<size_t>(num_released_blocks), kReleasedBlock);
  seq.num_released_blocks = num_released_blocks;
  if (!pool_.allocate_n(image.num_blocks, seq.block_table)) {
    seq.block_table.clear();
    seq.num_released_blocks = 0;
    return out_of_range("swap-in needs {} KV blocks, {} are free", image.num_blocks, pool_.num_free());
  }
  const auto bb = static_cast<size_t>(image.shape.block_bytes);
  for (int32_t i = 0; i < image.num_blocks; ++i) {
    Status s = device_.write_kv_block(
        seq.block_table[static_cast<size_t>(num_released_blocks + i)],
        std::span<const uint8_t>(image.bytes.data() + bb * static_cast<size_t>(i), bb));
    if (!s.ok()) {
      pool_.release_all(live_blocks(seq));
      seq.block_table.clear();
      seq.num_released_blocks = 0;
      return s;
    }
  }
  MET_RETURN_IF_ERROR(restore_state(seq, image, seq_len));
  seq.seq_len = seq_len;
  return ok_status();
}

Status KvManager::restore_state(SeqState& seq, const SpillImage& image, int32_t seq_len) {
  if (shape_.state_bytes == 0) return ok_status();
  Status s = out_of_range("swap-in needs a state slot, all {} are held", num_state_slots());
  if (acquire_state_slot(seq)) {
    const size_t blocks_bytes = static_cast<size_t>(image.shape.block_bytes) * static_cast<size_t>(image.num_blocks);
    s = device_.write_state_slot(*seq.state_slot, seq_len,
                                 std::span<const uint8_t>(image.bytes).subspan(blocks_bytes));
  }
  if (!s.ok()) release_seq(ReleaseSeq{&seq, false, "restore"});  // the blocks and the slot, if taken
  return s;
}

}  // namespace met
