// PlanBuilder. Tested by tests/scheduler/plan_builder_test.cc.
#include "scheduler/plan_builder.h"

namespace met {

PlanBuilder::PlanBuilder(size_t max_seqs) {
  plan_.seqs.reserve(max_seqs);
  spare_.reserve(max_seqs);
}

StepPlan& PlanBuilder::begin(int32_t max_chain_seqs) {
  chain_seqs_left_ = max_chain_seqs;
  plan_.inputs.clear();
  plan_.positions.clear();
  plan_.outputs.clear();
  plan_.banned.clear();
  plan_.state_restores.clear();
  plan_.state_snapshots.clear();
  num_seqs_ = 0;
  return plan_;
}

void PlanBuilder::add_seq(int32_t row_begin, int32_t num_rows, int32_t num_cached, std::span<const BlockId> table,
                          std::optional<StateSlotId> state_slot, bool state_checkpoints, int32_t mtp_chain,
                          int32_t adapter_slot) {
  if (num_seqs_ == plan_.seqs.size()) {
    plan_.seqs.emplace_back();
    if (!spare_.empty()) {
      plan_.seqs.back().block_table = std::move(spare_.back());
      spare_.pop_back();
    }
  }
  StepSeq& s = plan_.seqs[num_seqs_++];
  s.row_begin = row_begin;
  s.num_rows = num_rows;
  s.num_cached = num_cached;
  s.state_slot = state_slot;
  s.state_checkpoints = state_checkpoints;
  s.adapter_slot = adapter_slot;
  s.mtp_chain = chain_seqs_left_ > 0 ? mtp_chain : 0;
  if (s.mtp_chain > 0) --chain_seqs_left_;
  assign_block_table(s.block_table, table);
}

const StepPlan& PlanBuilder::finish() {
  while (plan_.seqs.size() > num_seqs_) {
    spare_.push_back(std::move(plan_.seqs.back().block_table));
    plan_.seqs.pop_back();
  }
  return plan_;
}

}  // namespace met
