// CpuDevice: the Device that runs a Model's forward steps on the CPU. launch()
// copies the plan onto a queue and returns; a device thread takes steps in
// order, resolves FeedFromRow inputs from the previous step's argmax, and runs
// the ForwardPass on the WorkerPool; await_result() hands back the results in
// launch order. The KV cache lives here; read/write_kv_block copy one block
// for the spill store while no step is in flight. A MoE model's expert load
// is the forward pass's (ExpertLoad), read from any thread. A model with
// recurrent layers keeps their state here too (cpu::RecurrentState, one slot
// per sequence of a step: ForwardLimits::max_seqs, then
// num_state_snapshots for the prefix cache's snapshots), read/written by
// read/write_state_slot for spill images. With state_rollback >= 2 a
// sequence's slot keeps that many older versions and a step starts from the
// version at its num_cached, so a step launched ahead can be redone
// (kRewindable); with less its steps are RepickOnly. A step whose state is
// not there fails at await, naming the slot.
// LoRA adapters: bind_adapter (owner thread) sets a slot's adapter; launch
// copies the slots' adapters into the step, so a step runs with what the
// slots held when it was launched and keeps those adapters alive while it
// runs, whatever is bound or unloaded meanwhile.
// An encoder (bert, nomic-bert) runs on an EncoderPass instead: hidden
// outputs only, each sequence whole in its step (DeviceInfo::has_head and
// causal false).
// Invariants: steps run strictly in launch order; a ticket is awaited once;
// every launched step is awaited before its ticket is reused.
// Threading: launch/await/kv I/O from one owner thread (the engine); the
// forward runs on the device thread and the pool's workers.
// Tested by tests/model/cpu_device_test.cc.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <thread>

#include "core/mutex.h"
#include "backend/cpu/kv_cache.h"
#include "backend/cpu/recurrent_state.h"
#include "backend/cpu/worker_pool.h"
#include "backend/device.h"
#include "model/encoder_pass.h"
#include "model/forward_pass.h"
#include "model/model.h"

namespace met {

struct CpuDeviceOptions {
  int num_threads = 1;
  GgmlType kv_dtype = GgmlType::kF16;
  int32_t num_kv_blocks = 256;
  ForwardLimits limits;
  ForwardOptions forward{};
  // Models with recurrent layers: state slots beyond one per sequence
  // (limits.max_seqs) that hold snapshots for the prefix cache.
  int32_t num_state_snapshots = 0;
  // Models with recurrent layers: tokens a sequence's state can be rewound
  // (versions its slot keeps behind the current one; DeviceInfo::state_rollback).
  int32_t state_rollback = 0;
  // Models with recurrent layers: drafts a sequence may verify in one step
  // (DeviceInfo::state_drafts): its slot keeps one more version and logs
  // each verify row's inputs, to replay an accepted prefix. Versions and
  // logs are mapped lazily, so memory is taken only when used.
  int32_t state_drafts = 0;
  // LoRA adapter slots (DeviceInfo::num_adapter_slots), each holding an
  // adapter of rank up to forward.max_lora_rank; 0: no adapters run.
  int32_t num_adapter_slots = 0;
  // Where the steps' time goes, phase by phase (`met bench --phases`), or
  // null. It must outlive the device; read it while no step is in flight.
  cpu::PhaseProfile* phase_profile = nullptr;
};


class CpuDevice final : public Device {
 public:
  static Result<std::unique_ptr<CpuDevice>> create(const Model& model, const CpuDeviceOptions& options);
  ~CpuDevice() override;

  const DeviceInfo& info() const override { return info_; }
  Result<Ticket> launch(const StepPlan& plan) override;
  Status await_result(Ticket ticket, StepResult& out) override;
  Status read_kv_block(BlockId block, std::span<uint8_t> bytes) override;
  Status write_kv_block(BlockId block, std::span<const uint8_t> bytes) override;
  int64_t busy_ns() const override { return busy_ns_.load(std::memory_order_relaxed); }
  void read_expert_tokens(std::vector<int64_t>& counts) const override {
    if (forward_ != nullptr) {
      forward_->expert_load().read(counts);
    } else {
      counts.clear();
    }
  }
  Status read_state_slot(StateSlotId slot, int64_t position, std::span<uint8_t> bytes) override;
  Status write_state_slot(StateSlotId slot, int64_t position, std::span<const uint8_t> bytes) override;
  Status bind_adapter(int32_t slot, std::shared_ptr<const LoraAdapter> adapter) override;

 private:
  struct Step {
    Ticket ticket;
    StepPlan plan;
    StepResult result;
    Status status;  // what await_result answers (a step whose state is not there)
    bool done = false;
    // The adapter slots' adapters at launch (num_adapter_slots entries),
    // and their raw pointers for the forward pass.
    std::vector<std::shared_ptr<const LoraAdapter>> adapters;
    std::vector<const LoraAdapter*> adapter_ptrs;
  };

  CpuDevice(const Model& model, cpu::KvCache kv, std::optional<cpu::RecurrentState> state,
            const CpuDeviceOptions& options);
  void device_main();
  void run_step(Step& step);
  Status check_plan(const StepPlan& plan) const;
  Status check_state_io(StateSlotId slot, size_t num_bytes) const;
  // Each seq's adapter slot is in range and holds an adapter.
  Status check_adapters(const StepPlan& plan) const;

  const Model& model_;
  cpu::KvCache kv_;
  std::optional<cpu::RecurrentState> state_;  // models with recurrent layers
  CpuDeviceOptions options_;
  DeviceInfo info_;
  cpu::WorkerPool pool_;
  // One of the two: an encoder's steps run the EncoderPass.
  std::unique_ptr<ForwardPass> forward_;
  std::unique_ptr<EncoderPass> encoder_;
  std::vector<TokenId> tokens_;        // device thread: resolved inputs
  std::vector<TokenId> prev_argmax_;   // device thread: outputs of the last step run
  std::vector<std::shared_ptr<const LoraAdapter>> adapters_;  // owner thread: per adapter slot

  Mutex mu_;
  CondVar cv_;
  // Launched, not yet awaited, oldest first (a few at most: a vector, which
  // unlike a deque allocates nothing as steps come and go).
  std::vector<std::unique_ptr<Step>> steps_ GUARDED_BY(mu_);
  std::vector<std::unique_ptr<Step>> free_steps_ GUARDED_BY(mu_);  // reused to avoid allocation
  uint64_t next_ticket_ = 1;   // owner thread
  bool stop_ GUARDED_BY(mu_) = false;
  std::atomic<int64_t> busy_ns_{0};  // written by the device thread
  std::thread thread_;
};

}  // namespace met
