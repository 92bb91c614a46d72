// StepPlan and StepResult: what one forward step computes and what it gives
// back, as plain data (the scheduler builds plans; a Device runs them).
// A step is a flat batch of rows (tokens at positions) grouped by sequence:
// each StepSeq owns a contiguous run of rows, the KV block table its rows
// read and write, and how many tokens of it are already in the cache. A
// prefill chunk is a StepSeq with many rows; a decode row is one with one.
// Invariants (checked by validate_plan): seqs cover the rows in order without
// gaps; positions of a seq's rows are num_cached, num_cached+1, …; its block
// table holds every block those positions touch (blocks of the device's
// DeviceInfo::kv_block_tokens positions), except that with a window (every
// layer reads at most `window` positions back: DeviceInfo::kv_window) a
// block wholly before the window of the seq's first row may be
// kReleasedBlock; output rows are distinct and in range; a FeedFromRow names
// a row of the previous step's outputs.
// Threading: plain data. Tested by tests/backend/step_plan_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <variant>
#include <vector>

#include "core/ids.h"
#include "core/status.h"

namespace met {

// A row's input token: given by the host, or taken on the device from an
// output row of the step launched just before (the pipelined lane feeds step
// t+1 from step t's argmax without a round trip).
struct FeedToken {
  TokenId id = 0;
};
struct FeedFromRow {
  int32_t output_index = 0;  // index into the previous step's outputs
};
using RowInput = std::variant<FeedToken, FeedFromRow>;

inline constexpr int32_t kNoAdapterSlot = -1;

struct StepSeq {
  int32_t row_begin = 0;
  int32_t num_rows = 0;
  int32_t num_cached = 0;             // tokens already in this sequence's KV
  std::vector<BlockId> block_table;   // covers positions [0, num_cached + num_rows); may lead with kReleasedBlock
  // Models with recurrent layers (DeviceInfo::num_state_slots > 0): the slot
  // holding this sequence's conv and SSM state, which the step advances past
  // its rows. A seq with num_cached == 0 starts from a zero state (the
  // device clears the slot first); otherwise the slot holds the state after
  // its first num_cached tokens. Empty for models without recurrent layers.
  std::optional<StateSlotId> state_slot;
  // A verify step's rows (speculative decoding): the device can continue
  // from the state after each row, not only after the last (the CPU device
  // logs the rows' inputs and replays an accepted prefix), so the next step
  // may start from any of num_cached + 1 … num_cached + num_rows (the
  // accepted drafts).
  // REQUIRES: a state_slot, and num_rows - 1 <= DeviceInfo::state_drafts.
  bool state_checkpoints = false;
  // With an MTP block running (DeviceInfo::mtp_drafts > 1): the block is fed
  // its own guess this many more times after the step, from the seq's last
  // row (which must be an output), giving StepResult::mtp_chain. 0: none.
  // REQUIRES: at most DeviceInfo::mtp_drafts - 1, and at most
  // DeviceInfo::mtp_chain_seqs seqs of a step chain.
  int32_t mtp_chain = 0;
  // The LoRA adapter slot whose adapter this seq's rows run with
  // (Device::bind_adapter); kNoAdapterSlot: the base model alone.
  // REQUIRES: below DeviceInfo::num_adapter_slots, and a slot with an
  // adapter bound when the step is launched.
  int32_t adapter_slot = kNoAdapterSlot;
};

enum class OutputKind : uint8_t {
  kLogits,  // the row's full logits come back to the host
  kArgmax,  // only the row's argmax token id comes back
  // Embeddings (DeviceInfo::hidden_size): the row's final hidden state, as
  // the head would read it (after the output norm), comes back instead of
  // logits; kHiddenSum gives the sum of those of every row of the row's
  // seq in this step (mean pooling over prefill chunks). Neither has logits
  // or an argmax. REQUIRES (kHiddenSum): the row is its seq's last.
  kHidden,
  kHiddenSum,
};

inline bool is_hidden_output(OutputKind kind) {
  return kind == OutputKind::kHidden || kind == OutputKind::kHiddenSum;
}

struct OutputRow {
  int32_t row = 0;  // flat row index
  OutputKind kind = OutputKind::kLogits;
  // Token ids this output may not pick: StepPlan::banned[banned_begin, +num_banned).
  // Their logits come back as -inf and they never win the argmax (min_tokens
  // suppresses EOS this way without a round trip through the host).
  int32_t banned_begin = 0;
  int32_t num_banned = 0;
};

// A copy of one recurrent-state slot into another, made by a step.
struct StateCopy {
  StateSlotId from;
  StateSlotId to;
};

struct StepPlan {
  std::vector<RowInput> inputs;      // one per row
  std::vector<int32_t> positions;    // one per row
  std::vector<StepSeq> seqs;
  std::vector<OutputRow> outputs;    // rows whose results come back, in this order
  std::vector<TokenId> banned;       // the outputs' banned ids, flat
  // Models with recurrent layers: copies the step makes before any row runs
  // (a seq resuming from a cached state snapshot: `to` is its state_slot and
  // its num_cached the tokens the snapshot holds) and after every row (a
  // snapshot of a seq's state: `from` is its state_slot).
  std::vector<StateCopy> state_restores;
  std::vector<StateCopy> state_snapshots;
  // With an MTP block running (DeviceInfo::mtp_drafts > 0): whether the step
  // computes the block's guesses (its head over the outputs). False (the
  // scheduler will not draft from them: speculation backed off): the block
  // still writes its keys and values at every row, so its KV is whole, but
  // computes nothing else (no attention, FFN or head) and mtp_argmax comes
  // back empty. REQUIRES when false: no seq chains.
  bool mtp_guesses = true;

  int32_t num_rows() const { return static_cast<int32_t>(inputs.size()); }
  void clear();  // keeps capacity: the scheduler reuses one plan per lane
};

inline constexpr TokenId kNoChainToken = -1;

struct StepResult {
  int32_t vocab_size = 0;
  // For output i: logits at [i * vocab_size, (i+1) * vocab_size) when its kind
  // is kLogits (rows of kArgmax outputs are left unspecified).
  std::vector<float> logits;
  // For output i: its argmax token (filled for every output but hidden ones).
  std::vector<TokenId> argmax;
  // For output i of a hidden kind: its hidden state (or sum of them) at
  // [i * hidden_size, (i+1) * hidden_size); other rows unspecified. Empty
  // when the step has no hidden outputs.
  int32_t hidden_size = 0;
  std::vector<float> hidden;
  // For output i, with an MTP block running (DeviceInfo::mtp_drafts > 0) and
  // StepPlan::mtp_guesses (empty without):
  // the token it predicts after output i's argmax (a draft); else empty.
  std::vector<TokenId> mtp_argmax;
  // Chained MTP drafts (StepSeq::mtp_chain): output o's at [o * mtp_chain_width,
  // (o + 1) * mtp_chain_width), the tokens the block guesses after
  // mtp_argmax[o] when fed its own guesses, for the last output of a seq
  // that asked (its first mtp_chain entries); kNoChainToken elsewhere.
  // Width: DeviceInfo::mtp_drafts - 1 (0: empty).
  int32_t mtp_chain_width = 0;
  std::vector<TokenId> mtp_chain;
  // The device's time on this step, in ns (0: not measured). The draft
  // budget fits its cost model to it (spec/draft_budget.h).
  int64_t busy_ns = 0;
};

// Copies `table` into `to`, giving `to` room to grow first (at least
// kMinTableBlocks, then double what it needs), so a table that gains a block
// block of tokens is not reallocated as it grows.
inline constexpr size_t kMinTableBlocks = 64;
void assign_block_table(std::vector<BlockId>& to, std::span<const BlockId> table);

// Copies `from` into `to`, reusing to's storage (block tables as
// assign_block_table does): no allocation once `to` has held a plan as large.
void copy_plan(const StepPlan& from, StepPlan& to);

// With `num_state_slots` > 0 (a model with recurrent layers), every seq
// names a state slot below it and no two seqs the same one; each restore
// copies into the slot of a seq with num_cached > 0 from a slot no seq runs
// in; each snapshot copies out of a seq's slot into a slot no seq runs in,
// no two into the same. With 0, none names a slot and there are no copies.
// A seq with state_checkpoints verifies at most `state_drafts` drafts (and
// needs a slot). The message names the first seq or copy at fault.
Status validate_state_slots(const StepPlan& plan, int32_t num_state_slots, int32_t state_drafts);

// With `max_chain` (DeviceInfo::mtp_drafts - 1, or 0) and `max_chain_seqs`
// (DeviceInfo::mtp_chain_seqs): each seq's mtp_chain is within [0,
// max_chain], at most max_chain_seqs seqs chain, and a chaining seq's last row
// is an output. The message names the first seq at fault.
Status validate_mtp_chains(const StepPlan& plan, int32_t max_chain, int32_t max_chain_seqs);

// Each seq's adapter_slot is kNoAdapterSlot or below `num_adapter_slots`;
// the message names the first seq at fault.
Status validate_adapter_slots(const StepPlan& plan, int32_t num_adapter_slots);

// A model without a head (DeviceInfo::has_head false) gives hidden outputs
// only; one without causal attention (DeviceInfo::causal false) takes every
// seq from its first token (num_cached 0). The message names the first
// output or seq at fault.
Status validate_model_outputs(const StepPlan& plan, bool has_head, bool causal);

// Checks the invariants above; `max_blocks` bounds block ids, `max_context`
// positions, `block_tokens` is the token slots of one block, `window` the
// positions every layer reads back (0: some layer reads the whole context,
// and no entry may be released). The message names the first seq or row at
// fault.
Status validate_plan(const StepPlan& plan, int32_t max_blocks, int32_t max_context, int32_t block_tokens,
                     int32_t window);

}  // namespace met
