// StepBuilder. Tested through tests/scheduler/scheduler_test.cc.
#include "scheduler/step_builder.h"

#include <algorithm>
#include <limits>

#include "core/check.h"
#include "sampling/logprobs.h"
#include "scheduler/commit_token.h"

namespace met {

void record_prompt_logprobs(ActiveSeq& a, const Scheduled& s, const StepResult& result) {
  const auto vocab = static_cast<size_t>(result.vocab_size);
  for (int32_t k = 0; k < s.num_prompt_outputs; ++k) {
    const auto o = static_cast<size_t>(s.prompt_outputs_begin + k);
    const std::span<const float> row(result.logits.data() + o * vocab, vocab);
    const int32_t q = s.first_predicted + k;
    a.prompt_logprob_entries.push_back(token_logprob(row, a.seq.tokens[static_cast<size_t>(q)], *a.prompt_logprobs));
    a.prompt_logprobs_next = q + 1;
  }
}

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
  add_prompt_outputs(a, begin, n, s);
  if (a.seq.seq_len + n == static_cast<int32_t>(a.seq.tokens.size())) {
    s.output = static_cast<int32_t>(plan.outputs.size());
    add_output_row(plan, begin + n - 1, needs_logits(a) ? OutputKind::kLogits : OutputKind::kArgmax, a);
  }
  scheduled_.push_back(s);
}

// Row k of a chunk (position seq_len + k) predicts token seq_len + k + 1: a
// logits row for each one that is a prompt token still missing its logprob.
void StepBuilder::add_prompt_outputs(const ActiveSeq& a, int32_t begin, int32_t n, Scheduled& s) {
  if (!wants_prompt_logprobs(a)) return;
  StepPlan& plan = builder_.plan();
  s.prompt_outputs_begin = static_cast<int32_t>(plan.outputs.size());
  for (int32_t k = 0; k < n; ++k) {
    const int32_t q = a.seq.seq_len + k + 1;
    if (q < a.prompt_logprobs_next || q >= a.prompt_len) continue;
    if (s.num_prompt_outputs == 0) s.first_predicted = q;
    plan.outputs.push_back(OutputRow{begin + k, OutputKind::kLogits});
    ++s.num_prompt_outputs;
  }
}

// Rows of a prefill chunk for `a` that the step's outputs can take: every row
// when prompt logprobs are wanted (one kept for the chunk's sampled token).
int32_t StepBuilder::output_room(const ActiveSeq& a, const DeviceInfo& info) {
  if (!wants_prompt_logprobs(a)) return std::numeric_limits<int32_t>::max();
  return info.max_outputs - static_cast<int32_t>(builder_.plan().outputs.size()) - 1;
}

bool StepBuilder::build(std::vector<ActiveSeq>& active, const DeviceInfo& info, KvManager& kv,
                        int32_t max_batch_tokens) {
  builder_.begin();
  scheduled_.clear();
  int32_t budget = max_batch_tokens;
  for (size_t i = 0; i < active.size() && budget > 0; ++i) {
    ActiveSeq& a = active[i];
    if (a.finished || pending_tokens(a) != 1) continue;
    if (kv.reserve(a.seq, a.seq.seq_len + 1) != Admit::kNow) continue;
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
        (static_cast<int32_t>(a.seq.block_table.size()) + kv.num_free_blocks()) * kKvBlockTokens - a.seq.seq_len;
    const int32_t n = std::min({pending_tokens(a), budget, room, output_room(a, info)});
    if (n <= 0) continue;
    const Admit r = kv.reserve(a.seq, a.seq.seq_len + n);
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
