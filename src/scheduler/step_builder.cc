// StepBuilder. Tested through tests/scheduler/scheduler_test.cc.
#include "scheduler/step_builder.h"

#include <algorithm>

#include "core/check.h"
#include "scheduler/settle.h"

namespace met {

StepBuilder::StepBuilder(size_t max_seqs) : builder_(max_seqs) {
  scheduled_.reserve(max_seqs);
  order_.reserve(max_seqs);
}

void StepBuilder::add(ActiveSeq& a, size_t idx, int32_t n) {
  StepPlan& plan = builder_.plan();
  const int32_t begin = plan.num_rows();
  for (int32_t k = 0; k < n; ++k) {
    plan.inputs.push_back(FeedToken{a.seq.tokens[static_cast<size_t>(a.seq.seq_len + k)]});
    plan.positions.push_back(a.seq.seq_len + k);
  }
  builder_.add_seq(begin, n, a.seq.seq_len, a.seq.block_table);
  Scheduled s{idx, n, std::nullopt};
  if (a.seq.seq_len + n == static_cast<int32_t>(a.seq.tokens.size())) {
    s.output = static_cast<int32_t>(plan.outputs.size());
    add_output_row(plan, begin + n - 1, needs_logits(a) ? OutputKind::kLogits : OutputKind::kArgmax, a);
  }
  scheduled_.push_back(s);
}

bool StepBuilder::build(std::vector<ActiveSeq>& active, DevPort& dev, int32_t max_batch_tokens) {
  builder_.begin();
  scheduled_.clear();
  int32_t budget = max_batch_tokens;
  for (size_t i = 0; i < active.size() && budget > 0; ++i) {
    ActiveSeq& a = active[i];
    if (a.finished || pending_tokens(a) != 1) continue;
    if (dev.reserve_kv(a.seq, a.seq.seq_len + 1) != Admit::kNow) continue;
    add(a, i, 1);
    budget -= 1;
  }
  order_.clear();
  for (size_t i = 0; i < active.size(); ++i) {
    if (!active[i].finished && pending_tokens(active[i]) > 1) order_.push_back(i);
  }
  std::sort(order_.begin(), order_.end(),
            [&](size_t x, size_t y) { return active[x].admit_order < active[y].admit_order; });
  for (size_t i : order_) {
    if (budget <= 0) break;
    ActiveSeq& a = active[i];
    const int32_t room =
        (static_cast<int32_t>(a.seq.block_table.size()) + dev.num_free_blocks()) * kKvBlockTokens - a.seq.seq_len;
    const int32_t n = std::min({pending_tokens(a), budget, room});
    if (n <= 0) continue;
    const Admit r = dev.reserve_kv(a.seq, a.seq.seq_len + n);
    MET_CHECK(r == Admit::kNow, "seq {}: reserving {} tokens failed with room for {}", a.seq.id.value(), n, room);
    add(a, i, n);
    budget -= n;
  }
  builder_.finish();
  return !scheduled_.empty();
}

bool StepBuilder::is_decode_only(size_t num_active) const {
  if (scheduled_.size() != num_active) return false;
  for (size_t i = 0; i < scheduled_.size(); ++i) {
    const Scheduled& s = scheduled_[i];
    if (s.active_idx != i || s.num_rows != 1 || !s.output.has_value()) return false;
  }
  return true;
}

}  // namespace met
