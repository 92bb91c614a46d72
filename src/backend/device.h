// Device: the port through which the engine runs forward steps (DESIGN.md's
// `dev`): launch returns at once with a ticket, await_result blocks until that
// step is done. Implementations: the CPU model runner (src/model), the CUDA
// one later, and FakeDevice in tests. Steps run in launch order; at most a few
// are in flight (the pipelined lane keeps one ahead).
// KV block I/O lets the spill store save and restore a sequence's blocks.
// Threading: one caller thread (the engine), but busy_ns and
// read_expert_tokens from any; implementations may compute on their own
// threads. Tested through each implementation.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "backend/lora_adapter.h"
#include "backend/step_plan.h"
#include "core/ids.h"
#include "core/pooling.h"
#include "core/status.h"
#include "gguf/ggml_type.h"

namespace met {

// What the host may do with a row of a step launched ahead (fed from the
// step before it on the device) that it decides to discard.
enum class FedAheadPolicy : uint8_t {
  kRewindable,  // the row's KV at that position is rewritten by the redo: discard and redo it
  kRepickOnly,  // recurrent state that cannot be rewound: the forward stands, the host re-picks
};

// The state rollback (DeviceInfo::state_rollback) a pipelined decode lane
// needs to redo a step launched ahead: a row is at most two tokens past what
// the host committed.
inline constexpr int32_t kLaneStateRollback = 2;

// The most DeviceInfo::mtp_drafts any device gives.
inline constexpr int32_t kMaxMtpDrafts = 16;

struct DeviceInfo {
  int32_t vocab_size = 0;
  int32_t num_kv_blocks = 0;      // the pool's size, in blocks of kv_block_tokens
  int32_t kv_block_tokens = 0;    // token slots per block of the device's KV layout
  int32_t max_context = 0;        // positions the model accepts
  // Positions every layer's attention reaches back: a row at position p
  // reads only [p - kv_window + 1, p], so blocks wholly before that are never
  // read and may be given back (kReleasedBlock in a plan's tables). 0: some
  // layer reads the whole context.
  int32_t kv_window = 0;
  int64_t kv_block_bytes = 0;     // bytes of one block across all layers, K and V
  // The KV cache's shape, so a spill image can say what it holds.
  GgmlType kv_dtype = GgmlType::kF16;
  int32_t num_layers = 0;
  int32_t num_kv_heads = 0;
  int32_t head_dim = 0;
  int32_t max_rows = 0;           // rows one step may hold
  int32_t max_seqs = 0;           // sequences one step may hold
  int32_t max_outputs = 0;        // output rows one step may hold
  int32_t num_experts = 0;        // MoE: routed experts per layer (0: a dense model)
  FedAheadPolicy fed_ahead_policy = FedAheadPolicy::kRewindable;
  // Models with recurrent layers: slots of per-sequence conv and SSM state
  // (StepSeq::state_slot), and the bytes of one (all recurrent layers).
  // 0: the model keeps no recurrent state.
  int32_t num_state_slots = 0;
  int64_t state_slot_bytes = 0;
  // The last num_state_snapshot_slots of those hold state snapshots for the
  // prefix cache (StepPlan::state_snapshots); the others running sequences.
  int32_t num_state_snapshot_slots = 0;
  // Tokens a running sequence's state can be rewound (the decode rollback
  // ring): a step may start from any of the last state_rollback positions a
  // sequence's slot ran through, as well as from its newest.
  int32_t state_rollback = 0;
  // Drafts a sequence with recurrent state may verify in one step (rows of
  // a StepSeq with state_checkpoints, less one); 0: none.
  int32_t state_drafts = 0;
  // Drafts per step the model's own MTP block gives: one per output
  // (StepResult::mtp_argmax), and up to mtp_drafts - 1 more chained from a
  // seq's last output (StepSeq::mtp_chain, StepResult::mtp_chain) for at
  // most mtp_chain_seqs seqs of a step. 0: none runs.
  int32_t mtp_drafts = 0;
  int32_t mtp_chain_seqs = 0;
  // LoRA adapters: slots a step's seqs may name (StepSeq::adapter_slot),
  // each holding one adapter (Device::bind_adapter) of rank at most
  // max_lora_rank. 0: the device runs no adapters.
  int32_t num_adapter_slots = 0;
  int32_t max_lora_rank = 0;
  // Embeddings: the width of a hidden output (OutputKind::kHidden), and
  // whether the model can give logits at all (an encoder such as BERT has
  // no head: every output is a hidden one). A model whose attention is not
  // causal (every row of a sequence reads all of its rows) needs each
  // sequence whole in one step: num_cached 0, every prompt row present.
  int32_t hidden_size = 0;
  bool has_head = true;
  bool causal = true;
  // How the model's embeddings pool a sequence (the file's pooling_type;
  // without one, the last token's for a causal model, CLS for an encoder).
  Pooling pooling = Pooling::kLast;
};

class Device {
 public:
  virtual ~Device() = default;

  virtual const DeviceInfo& info() const = 0;

  // Starts the step; the plan is copied. An error here means nothing runs.
  virtual Result<Ticket> launch(const StepPlan& plan) = 0;
  // Waits for `ticket` (the oldest step not yet awaited) and fills `out`.
  virtual Status await_result(Ticket ticket, StepResult& out) = 0;

  // Copies one KV block (all layers, K and V) out of / into the pool. Only
  // while no step is in flight. `bytes` holds exactly info().kv_block_bytes.
  virtual Status read_kv_block(BlockId block, std::span<uint8_t> bytes) = 0;
  virtual Status write_kv_block(BlockId block, std::span<const uint8_t> bytes) = 0;

  // Copies one recurrent-state slot (all recurrent layers) out of / into the
  // device, for spill images: the state after `position` tokens (a sequence's
  // seq_len). A read refuses when the slot holds no state after `position`
  // (a step ran past it and the slot keeps no version behind); a write makes
  // that state the slot's only one. Only while no step is in flight. `bytes`
  // holds exactly info().state_slot_bytes. A device whose model keeps no
  // recurrent state refuses.
  virtual Status read_state_slot(StateSlotId slot, int64_t /*position*/, std::span<uint8_t> /*bytes*/) {
    return unimplemented("state slot {}: this device keeps no recurrent state", slot.value());
  }
  virtual Status write_state_slot(StateSlotId slot, int64_t /*position*/, std::span<const uint8_t> /*bytes*/) {
    return unimplemented("state slot {}: this device keeps no recurrent state", slot.value());
  }

  // Makes `adapter` the weights of adapter slot `slot` for the steps
  // launched from now on (a step in flight keeps what it was launched
  // with); null empties the slot. Refused: a slot outside
  // DeviceInfo::num_adapter_slots, or an adapter this device cannot run (a
  // rank above max_lora_rank, matrices that are not the model's). A step
  // naming an empty slot is refused at launch.
  virtual Status bind_adapter(int32_t slot, std::shared_ptr<const LoraAdapter> /*adapter*/) {
    return unimplemented("adapter slot {}: this device runs no LoRA adapters", slot);
  }

  // Nanoseconds spent running steps since creation (0 where not measured):
  // with wall time it gives the share of time the device sits idle waiting
  // for the host.
  virtual int64_t busy_ns() const { return 0; }

  // MoE models: the (token, choice) pairs routed to each expert of each layer
  // since creation, layer-major (num_layers × num_experts); empty otherwise.
  // Any thread (like busy_ns): each count is current, not all of one instant.
  virtual void read_expert_tokens(std::vector<int64_t>& counts) const { counts.clear(); }
};

}  // namespace met
