// FakeDevice: a Device for scheduler and engine tests. Each row writes its
// (token, position) into its KV slot of the block table, and an output row's
// next token is a function of the tokens read back from the KV blocks for
// positions [0, pos] (with kv_window, the window [pos - kv_window + 1, pos]
// only, as a windowed model's attention reads): a wrong block table, a lost
// block or a bad spill restore changes the output, so tests of swap and
// recompute compare real outputs.
// By default the next token is a hash of that context (never an EOG id unless
// allowed); a test can script it. Any call can be told to fail. Steps run at
// await time, in launch order; FeedFromRow reads the step awaited before.
// With num_state_slots > 0 it also plays a recurrent model: each seq of a
// step names a state slot whose state (a hash of every token the slot has
// consumed, and their count) advances over the seq's rows; a seq with
// num_cached == 0 starts from the empty state; an output's next token then
// depends on that state as well as on its KV context, so a lost, swapped or
// stale state changes outputs. A seq whose slot has consumed a number of
// tokens other than its num_cached is counted in num_state_mismatches()
// (the scheduler ran a row on a state that is not the sequence's). With
// state_rollback, a slot keeps that many older versions and a step runs from
// the one at its num_cached, as a device with a decode rollback ring does;
// read_state_slot reads the version at a position and refuses when there is
// none. Hidden outputs (embeddings) have kFakeHiddenSize floats read back
// from the KV like an output's context: a row at position p gives (its
// token, p, the sum of the tokens at positions [0, p] or, for a non-causal
// model, of its whole seq in the step, 1); a sum output adds its seq's rows.
// With state_drafts, a verify seq keeps a version after each row. A
// plan's state restores are made before its rows and its snapshots after
// them. FakeDeviceOptions::mtp plays a model's MTP block. With
// num_adapter_slots > 0 it runs LoRA adapters: a seq's outputs depend on
// the name of the adapter its slot held at launch (as if the adapter's
// weights changed the model), so a row run with the wrong adapter, or
// none, changes the output; a step naming an empty slot is refused.
// Threading: one caller (the engine thread). Never linked into apps/.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "backend/device.h"
#include "kv/kv_block.h"

namespace met::testing {

enum class DeviceCall { kLaunch, kAwait, kReadKv, kWriteKv, kReadState, kWriteState, kBindAdapter };

struct FakeDeviceOptions {
  int32_t vocab_size = 512;
  int32_t num_kv_blocks = 64;
  int32_t max_context = 4096;
  // DeviceInfo::kv_window: each output reads only its last kv_window
  // positions, and plans may release blocks behind them (0: whole context).
  int32_t kv_window = 0;
  int32_t max_rows = 512;
  int32_t max_seqs = 64;
  // The block size the device reports (its own layout is always kKvBlockTokens).
  int32_t kv_block_tokens = kKvBlockTokens;
  FedAheadPolicy policy = FedAheadPolicy::kRewindable;
  // Recurrent-state slots (DeviceInfo::num_state_slots); 0: a model without.
  // The last num_state_snapshot_slots of them hold snapshots.
  int32_t num_state_slots = 0;
  int32_t num_state_snapshot_slots = 0;
  // DeviceInfo::state_rollback: older state versions each slot keeps.
  int32_t state_rollback = 0;
  // DeviceInfo::state_drafts: a verify seq (StepSeq::state_checkpoints)
  // keeps the state after each of its rows, up to this many drafts.
  int32_t state_drafts = 0;
  // Tokens the default next-token function never returns (EOG ids).
  std::vector<TokenId> avoid;
  // StepResult::busy_ns of a step of so many rows (unset: 0, not measured).
  std::function<int64_t(int32_t rows)> step_ns;
  // Plays an MTP block (DeviceInfo::mtp_drafts = 1 + mtp_chain): each
  // output's mtp_argmax is mtp(its context followed by its argmax); a
  // chaining seq's (StepSeq::mtp_chain) next guesses are mtp of that context
  // followed by the guesses before. Null: none.
  std::function<TokenId(std::span<const TokenId>)> mtp = nullptr;
  int32_t mtp_chain = 0;
  // DeviceInfo::num_adapter_slots and max_lora_rank.
  int32_t num_adapter_slots = 0;
  int32_t max_lora_rank = 64;
  // DeviceInfo::has_head, causal and pooling (an embedding model).
  bool has_head = true;
  bool causal = true;
  Pooling pooling = Pooling::kLast;
};

inline constexpr int32_t kFakeHiddenSize = 4;

class FakeDevice final : public Device {
 public:
  using NextToken = std::function<TokenId(std::span<const TokenId> context)>;

  explicit FakeDevice(FakeDeviceOptions options);

  const DeviceInfo& info() const override { return info_; }
  Result<Ticket> launch(const StepPlan& plan) override;
  Status await_result(Ticket ticket, StepResult& out) override;
  Status read_kv_block(BlockId block, std::span<uint8_t> bytes) override;
  Status write_kv_block(BlockId block, std::span<const uint8_t> bytes) override;
  Status read_state_slot(StateSlotId slot, int64_t position, std::span<uint8_t> bytes) override;
  Status write_state_slot(StateSlotId slot, int64_t position, std::span<const uint8_t> bytes) override;
  Status bind_adapter(int32_t slot, std::shared_ptr<const LoraAdapter> adapter) override;

  // Adapters bound so far (bind_adapter calls with an adapter), and what a
  // slot holds now.
  int64_t num_binds() const { return num_binds_; }
  const LoraAdapter* bound(int32_t slot) const { return adapters_[static_cast<size_t>(slot)].get(); }

  void set_next_token(NextToken fn) { next_token_ = std::move(fn); }
  // Step `step` (0-based, in await order) reports `token` as its argmax for
  // output `output` while its logits say otherwise: a readback that disagrees.
  void override_argmax(int64_t step, size_t output, TokenId token) { overrides_.push_back({step, output, token}); }
  // The n-th call (0-based, counting every call of every kind) fails.
  void fail_call(int64_t n) { fail_at_ = n; }
  // Every call of this kind from now on fails.
  void fail_every(DeviceCall kind) { fail_kind_ = kind; }
  int64_t num_calls() const { return num_calls_; }
  int64_t num_steps() const { return num_steps_; }
  int32_t max_rows_seen() const { return max_rows_seen_; }
  int64_t num_state_mismatches() const { return num_state_mismatches_; }
  const std::vector<StepPlan>& plans() const { return plans_; }
  void keep_plans(bool keep) { keep_plans_ = keep; }

  // The default next token for a context (exposed so tests can predict it):
  // the context an output reads, its window only when kv_window is set.
  TokenId default_next(std::span<const TokenId> context) const;

 private:
  Status count(DeviceCall kind);
  // Advances the state slots over the plan's rows; row_state_ gets each
  // row's state after it.
  void run_states(const StepPlan& plan, std::span<const TokenId> tokens);
  // Adds the hidden state of `row` of `sq` to `h` (kFakeHiddenSize floats).
  void add_row_hidden(const StepPlan& plan, const StepSeq& sq, int32_t row, float* h) const;
  void write_hidden(const StepPlan& plan, StepResult& out) const;

  struct SlotState {
    uint64_t hash = 0;
    int64_t num_tokens = 0;
  };
  // The version of `slot` a step from position `from` runs on (counting a
  // mismatch when there is none); versions past `from` are forgotten.
  SlotState begin_state(StateSlotId slot, int64_t from);
  // Keeps `st` as the slot's newest version, and at most state_rollback older.
  void end_state(StateSlotId slot, const SlotState& st);
  FakeDeviceOptions options_;
  DeviceInfo info_;
  std::vector<int32_t> kv_;  // per block: kKvBlockTokens x (token, position)
  NextToken next_token_;
  std::deque<std::pair<Ticket, StepPlan>> pending_;  // launched, not yet awaited
  // Per pending step, per seq: its adapter's mark (0: none), taken at launch.
  std::deque<std::vector<TokenId>> pending_marks_;
  std::vector<std::shared_ptr<const LoraAdapter>> adapters_;  // per adapter slot
  int64_t num_binds_ = 0;
  uint64_t next_ticket_ = 1;
  std::optional<int64_t> fail_at_;
  std::optional<DeviceCall> fail_kind_;
  int64_t num_calls_ = 0;
  int64_t num_steps_ = 0;
  int32_t max_rows_seen_ = 0;
  bool keep_plans_ = false;
  std::vector<StepPlan> plans_;
  struct Override {
    int64_t step;
    size_t output;
    TokenId token;
  };
  std::vector<Override> overrides_;
  std::vector<TokenId> prev_argmax_;
  std::vector<TokenId> context_;
  std::vector<std::vector<SlotState>> states_;  // per slot: its versions, oldest first
  std::vector<uint64_t> row_state_;
  int64_t num_state_mismatches_ = 0;
};

}  // namespace met::testing
