// PlanBuilder: fills one StepPlan step after step without giving back the
// storage of its per-sequence block tables, so building a step in steady
// state allocates nothing (DESIGN.md: no allocation per token on the engine
// thread). StepPlan::clear() would drop every StepSeq's table.
// Invariants: between begin() and finish() the plan's seqs may hold stale
// entries past the ones added; after finish() it holds exactly those added.
// Threading: engine thread only. Tested by tests/scheduler/plan_builder_test.cc.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "backend/step_plan.h"

namespace met {

class PlanBuilder {
 public:
  explicit PlanBuilder(size_t max_seqs = 0);

  // Starts a new step: rows, outputs and bans are cleared; seq slots are
  // kept. At most `max_chain_seqs` seqs of it chain MTP drafts
  // (DeviceInfo::mtp_chain_seqs).
  StepPlan& begin(int32_t max_chain_seqs = 0);
  // Appends a sequence run of rows with a copy of `table`.
  // `state_slot`: the seq's recurrent-state slot (models with recurrent
  // layers); `state_checkpoints`: StepSeq's (a verify step's rows);
  // `mtp_chain`: StepSeq's, dropped to 0 once max_chain_seqs seqs chain;
  // `adapter_slot`: StepSeq's (the seq's LoRA adapter slot).
  void add_seq(int32_t row_begin, int32_t num_rows, int32_t num_cached, std::span<const BlockId> table,
               std::optional<StateSlotId> state_slot = std::nullopt, bool state_checkpoints = false,
               int32_t mtp_chain = 0, int32_t adapter_slot = kNoAdapterSlot);
  // Trims the plan's seqs to those added since begin(); returns the plan.
  const StepPlan& finish();

  StepPlan& plan() { return plan_; }
  const StepPlan& plan() const { return plan_; }

 private:
  StepPlan plan_;
  size_t num_seqs_ = 0;
  int32_t chain_seqs_left_ = 0;
  std::vector<std::vector<BlockId>> spare_;  // tables of seqs trimmed off, kept for reuse
};

}  // namespace met
