// StepPlan::clear and validate_plan: the invariants documented in
// step_plan.h, checked in order (rows, seqs, positions, block tables,
// outputs) so the message names the first fault.
// Threading: pure functions over plain data. Tested by
// tests/backend/step_plan_test.cc.
#include "backend/step_plan.h"

#include <algorithm>
#include <vector>

namespace met {
namespace {

Status validate_inputs(const StepPlan& plan) {
  if (plan.positions.size() != plan.inputs.size()) {
    return invalid_argument("step plan: {} inputs but {} positions", plan.inputs.size(),
                            plan.positions.size());
  }
  for (size_t row = 0; row < plan.inputs.size(); ++row) {
    const auto* from = std::get_if<FeedFromRow>(&plan.inputs[row]);
    if (from != nullptr && from->output_index < 0) {
      return invalid_argument("step plan: row {} feeds from output {}", row, from->output_index);
    }
  }
  return ok_status();
}

// Every entry names a block of the pool, or is kReleasedBlock wholly before
// the window of the seq's first row (position num_cached reads from
// num_cached - window + 1; later rows read later positions).
Status validate_block_table(const StepSeq& seq, size_t index, int32_t max_blocks, int32_t block_tokens,
                            int32_t window) {
  const int64_t first_read = window > 0 ? int64_t{seq.num_cached} - window + 1 : 0;
  for (size_t b = 0; b < seq.block_table.size(); ++b) {
    const BlockId id = seq.block_table[b];
    if (id == kReleasedBlock) {
      if (static_cast<int64_t>(b + 1) * block_tokens <= first_read) continue;
      return invalid_argument("step plan: seq {} block {} was released, but the window of position {} reaches it",
                              index, b, seq.num_cached);
    }
    if (id.value() < 0 || id.value() >= max_blocks) {
      return invalid_argument("step plan: seq {} block {} is id {}, outside [0, {})", index, b, id.value(),
                              max_blocks);
    }
  }
  return ok_status();
}

Status validate_seq(const StepPlan& plan, size_t index, int32_t expected_begin, int32_t max_blocks,
                    int32_t max_context, int32_t block_tokens, int32_t window) {
  const StepSeq& seq = plan.seqs[index];
  if (seq.row_begin != expected_begin) {
    return invalid_argument("step plan: seq {} starts at row {}, expected {}", index, seq.row_begin,
                            expected_begin);
  }
  if (seq.num_rows <= 0 || seq.num_rows > plan.num_rows() - seq.row_begin) {
    return invalid_argument("step plan: seq {} has {} rows from row {} of {}", index, seq.num_rows,
                            seq.row_begin, plan.num_rows());
  }
  if (seq.num_cached < 0) {
    return invalid_argument("step plan: seq {} has {} cached tokens", index, seq.num_cached);
  }
  const int64_t end_position = int64_t{seq.num_cached} + seq.num_rows;
  if (end_position > max_context) {
    return invalid_argument("step plan: seq {} reaches position {}, past the context of {}", index,
                            end_position - 1, max_context);
  }
  for (int32_t i = 0; i < seq.num_rows; ++i) {
    const int32_t row = seq.row_begin + i;
    const int32_t position = plan.positions[static_cast<size_t>(row)];
    if (position != seq.num_cached + i) {
      return invalid_argument("step plan: seq {} row {} is at position {}, expected {}", index, row,
                              position, seq.num_cached + i);
    }
  }
  const int64_t blocks_needed = (end_position + block_tokens - 1) / block_tokens;
  if (static_cast<int64_t>(seq.block_table.size()) < blocks_needed) {
    return invalid_argument("step plan: seq {} needs {} KV blocks for {} tokens but has {}", index,
                            blocks_needed, end_position, seq.block_table.size());
  }
  return validate_block_table(seq, index, max_blocks, block_tokens, window);
}

// Whether the outputs name rows in increasing order (then none repeats): the
// order the scheduler writes them in, checked without allocating.
bool outputs_increase(const StepPlan& plan) {
  for (size_t i = 1; i < plan.outputs.size(); ++i) {
    if (plan.outputs[i].row <= plan.outputs[i - 1].row) return false;
  }
  return true;
}

// Whether `row` is the last row of its seq.
bool ends_its_seq(const StepPlan& plan, int32_t row) {
  return std::any_of(plan.seqs.begin(), plan.seqs.end(),
                     [&](const StepSeq& s) { return s.num_rows > 0 && s.row_begin + s.num_rows - 1 == row; });
}

Status validate_outputs(const StepPlan& plan) {
  std::vector<bool> seen;
  if (!outputs_increase(plan)) seen.assign(static_cast<size_t>(plan.num_rows()), false);
  for (size_t i = 0; i < plan.outputs.size(); ++i) {
    const int32_t row = plan.outputs[i].row;
    if (row < 0 || row >= plan.num_rows()) {
      return invalid_argument("step plan: output {} names row {} of {}", i, row, plan.num_rows());
    }
    if (!seen.empty()) {
      if (seen[static_cast<size_t>(row)]) return invalid_argument("step plan: output {} repeats row {}", i, row);
      seen[static_cast<size_t>(row)] = true;
    }
    const OutputRow& o = plan.outputs[i];
    if (o.banned_begin < 0 || o.num_banned < 0 ||
        static_cast<size_t>(o.banned_begin) + static_cast<size_t>(o.num_banned) > plan.banned.size()) {
      return invalid_argument("step plan: output {} bans ids [{}, +{}) of {}", i, o.banned_begin, o.num_banned,
                              plan.banned.size());
    }
    if (o.kind == OutputKind::kHiddenSum && !ends_its_seq(plan, row)) {
      return invalid_argument("step plan: output {} sums hidden states up to row {}, not its seq's last", i, row);
    }
  }
  return ok_status();
}

}  // namespace

void assign_block_table(std::vector<BlockId>& to, std::span<const BlockId> table) {
  if (to.capacity() < table.size()) to.reserve(std::max(table.size() * 2, kMinTableBlocks));
  to.assign(table.begin(), table.end());
}

void copy_plan(const StepPlan& from, StepPlan& to) {
  to.inputs = from.inputs;
  to.positions = from.positions;
  to.outputs = from.outputs;
  to.banned = from.banned;
  to.state_restores = from.state_restores;
  to.state_snapshots = from.state_snapshots;
  to.mtp_guesses = from.mtp_guesses;
  if (to.seqs.size() > from.seqs.size()) to.seqs.resize(from.seqs.size());
  while (to.seqs.size() < from.seqs.size()) to.seqs.emplace_back();
  for (size_t i = 0; i < from.seqs.size(); ++i) {
    const StepSeq& f = from.seqs[i];
    StepSeq& t = to.seqs[i];
    t.row_begin = f.row_begin;
    t.num_rows = f.num_rows;
    t.num_cached = f.num_cached;
    t.state_slot = f.state_slot;
    t.state_checkpoints = f.state_checkpoints;
    t.mtp_chain = f.mtp_chain;
    t.adapter_slot = f.adapter_slot;
    assign_block_table(t.block_table, f.block_table);
  }
}

Status validate_mtp_chains(const StepPlan& plan, int32_t max_chain, int32_t max_chain_seqs) {
  int32_t chaining = 0;
  for (size_t i = 0; i < plan.seqs.size(); ++i) {
    const StepSeq& s = plan.seqs[i];
    if (s.mtp_chain == 0) continue;
    if (!plan.mtp_guesses) return invalid_argument("step plan: seq {} chains MTP drafts in a step without guesses", i);
    if (s.mtp_chain < 0 || s.mtp_chain > max_chain) {
      return invalid_argument("step plan: seq {} chains {} MTP drafts; the device chains 0 to {}", i, s.mtp_chain,
                              max_chain);
    }
    if (++chaining > max_chain_seqs) {
      return invalid_argument("step plan: seq {} is chaining seq {}; the device chains at most {} a step", i,
                              chaining, max_chain_seqs);
    }
    const int32_t last = s.row_begin + s.num_rows - 1;
    const bool has_output =
        std::any_of(plan.outputs.begin(), plan.outputs.end(), [&](const OutputRow& o) { return o.row == last; });
    if (!has_output) return invalid_argument("step plan: seq {} chains MTP drafts from row {}, not an output", i, last);
  }
  return ok_status();
}

Status validate_adapter_slots(const StepPlan& plan, int32_t num_adapter_slots) {
  for (size_t i = 0; i < plan.seqs.size(); ++i) {
    const int32_t slot = plan.seqs[i].adapter_slot;
    if (slot == kNoAdapterSlot) continue;
    if (slot < 0 || slot >= num_adapter_slots) {
      return invalid_argument("step plan: seq {} runs adapter slot {}; the device has {} adapter slots", i, slot,
                              num_adapter_slots);
    }
  }
  return ok_status();
}

void StepPlan::clear() {
  inputs.clear();
  positions.clear();
  seqs.clear();  // drops the block tables' storage too; seqs keep their capacity
  outputs.clear();
  banned.clear();
  state_restores.clear();
  state_snapshots.clear();
  mtp_guesses = true;
}

namespace {

// The index of the seq running in `slot`, if any.
std::optional<size_t> seq_in_slot(const StepPlan& plan, StateSlotId slot) {
  for (size_t i = 0; i < plan.seqs.size(); ++i) {
    if (plan.seqs[i].state_slot == slot) return i;
  }
  return std::nullopt;
}

Status validate_copies(const StepPlan& plan, int32_t num_state_slots) {
  const auto in_range = [&](StateSlotId s) { return s.value() >= 0 && s.value() < num_state_slots; };
  for (size_t k = 0; k < plan.state_restores.size(); ++k) {
    const StateCopy& c = plan.state_restores[k];
    const std::optional<size_t> to = seq_in_slot(plan, c.to);
    if (!in_range(c.from) || !to.has_value() || seq_in_slot(plan, c.from).has_value() ||
        plan.seqs[*to].num_cached == 0) {
      return invalid_argument("step plan: restore {} copies slot {} into slot {}, not from a free slot into a "
                              "seq with cached tokens", k, c.from.value(), c.to.value());
    }
  }
  for (size_t k = 0; k < plan.state_snapshots.size(); ++k) {
    const StateCopy& c = plan.state_snapshots[k];
    bool repeated = false;
    for (size_t j = 0; j < k; ++j) repeated = repeated || plan.state_snapshots[j].to == c.to;
    if (!in_range(c.to) || !seq_in_slot(plan, c.from).has_value() || seq_in_slot(plan, c.to).has_value() ||
        repeated) {
      return invalid_argument("step plan: snapshot {} copies slot {} into slot {}, not from a seq into a free "
                              "slot of its own", k, c.from.value(), c.to.value());
    }
  }
  return ok_status();
}

}  // namespace

Status validate_state_slots(const StepPlan& plan, int32_t num_state_slots, int32_t state_drafts) {
  for (size_t i = 0; i < plan.seqs.size(); ++i) {
    const std::optional<StateSlotId>& slot = plan.seqs[i].state_slot;
    if (plan.seqs[i].state_checkpoints && plan.seqs[i].num_rows - 1 > state_drafts) {
      return invalid_argument("step plan: seq {} verifies {} drafts; a sequence with recurrent state may verify {}", i,
                              plan.seqs[i].num_rows - 1, state_drafts);
    }
    if (num_state_slots == 0) {
      if (slot.has_value()) return invalid_argument("step plan: seq {} names a state slot; the model has none", i);
      if (plan.seqs[i].state_checkpoints) return invalid_argument("step plan: seq {} keeps state checkpoints", i);
      continue;
    }
    if (!slot.has_value()) return invalid_argument("step plan: seq {} has no state slot", i);
    if (slot->value() < 0 || slot->value() >= num_state_slots) {
      return invalid_argument("step plan: seq {} names state slot {}, outside [0, {})", i, slot->value(),
                              num_state_slots);
    }
    for (size_t j = 0; j < i; ++j) {
      if (plan.seqs[j].state_slot == slot) {
        return invalid_argument("step plan: seqs {} and {} share state slot {}", j, i, slot->value());
      }
    }
  }
  if (num_state_slots == 0 && (!plan.state_restores.empty() || !plan.state_snapshots.empty())) {
    return invalid_argument("step plan: copies state slots; the model has none");
  }
  return validate_copies(plan, num_state_slots);
}

Status validate_plan(const StepPlan& plan, int32_t max_blocks, int32_t max_context, int32_t block_tokens,
                     int32_t window) {
  MET_RETURN_IF_ERROR(validate_inputs(plan));
  int32_t next_row = 0;
  for (size_t i = 0; i < plan.seqs.size(); ++i) {
    MET_RETURN_IF_ERROR(validate_seq(plan, i, next_row, max_blocks, max_context, block_tokens, window));
    next_row = plan.seqs[i].row_begin + plan.seqs[i].num_rows;
  }
  if (next_row != plan.num_rows()) {
    return invalid_argument("step plan: seqs cover rows [0, {}) of {}", next_row, plan.num_rows());
  }
  return validate_outputs(plan);
}

Status validate_model_outputs(const StepPlan& plan, bool has_head, bool causal) {
  if (!has_head) {
    for (size_t i = 0; i < plan.outputs.size(); ++i) {
      if (!is_hidden_output(plan.outputs[i].kind)) {
        return invalid_argument("step plan: output {} asks for logits of a model without a head (an encoder)", i);
      }
    }
  }
  if (!causal) {
    for (size_t i = 0; i < plan.seqs.size(); ++i) {
      if (plan.seqs[i].num_cached != 0) {
        return invalid_argument("step plan: seq {} continues after {} cached tokens; a model without causal "
                                "attention takes each sequence whole in one step",
                                i, plan.seqs[i].num_cached);
      }
    }
  }
  return ok_status();
}

}  // namespace met
