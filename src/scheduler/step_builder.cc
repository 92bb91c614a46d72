// StepBuilder. Tested through tests/scheduler/scheduler_test.cc.
#include "scheduler/step_builder.h"

#include <algorithm>

#include "core/check.h"
#include "sampling/logprobs.h"
#include "scheduler/commit_token.h"
#include "scheduler/speculation.h"

namespace met {

void record_prompt_logprobs(ActiveSeq& a, const Scheduled& s, const StepResult& result) {
  const auto vocab = static_cast<size_t>(result.vocab_size);
  for (int32_t k = 0; k < s.num_prompt_outputs; ++k) {
    const auto o = static_cast<size_t>(s.prompt_outputs_begin + k);
    const std::span<const float> row(result.logits.data() + o * vocab, vocab);
    const int32_t q = s.first_predicted + k;
    a.logprobs.prompt_entries.push_back(token_logprob(row, a.seq.tokens[static_cast<size_t>(q)], *a.logprobs.prompt));
    a.logprobs.prompt_next = q + 1;
  }
}

void record_embedding(ActiveSeq& a, const Scheduled& s, const StepResult& result) {
  if (a.seq.seq_len == s.num_rows) a.embed.pooled.clear();  // the prompt ran from its start (again)
  if (!s.output.has_value()) return;
  const auto width = static_cast<size_t>(result.hidden_size);
  const float* h = result.hidden.data() + static_cast<size_t>(*s.output) * width;
  if (*a.embed.pooling == Pooling::kMean && !a.embed.pooled.empty()) {
    for (size_t i = 0; i < width; ++i) a.embed.pooled[i] += h[i];
  } else {
    a.embed.pooled.assign(h, h + width);
  }
}

StepBuilder::StepBuilder(size_t max_seqs) : builder_(max_seqs) {
  scheduled_.reserve(max_seqs);
  views_.reserve(max_seqs);
  rows_.reserve(max_seqs);
  order_.reserve(max_seqs);
}

void StepBuilder::add_verify(ActiveSeq& a, size_t idx, int32_t n) {
  StepPlan& plan = builder_.plan();
  const int32_t begin = plan.num_rows();
  a.spec.drafts.resize(static_cast<size_t>(n - 1));
  for (int32_t k = 0; k < n; ++k) {
    const auto at = static_cast<size_t>(k);
    plan.inputs.push_back(FeedToken{k == 0 ? a.seq.tokens.back() : a.spec.drafts[at - 1]});
    plan.positions.push_back(a.seq.seq_len + k);
  }
  // Recurrent state: the device can continue from the state after each row,
  // prefix of the drafts that is accepted.
  builder_.add_seq(begin, n, a.seq.seq_len, a.seq.block_table, a.seq.state_slot, a.seq.state_slot.has_value(),
                   mtp_chain_for(a, n - 1, mtp_drafts_), a.seq.adapter_slot);
  Scheduled s{idx, n, static_cast<int32_t>(plan.outputs.size())};
  s.num_drafts = n - 1;
  add_verify_outputs(plan, begin, n, a);
  scheduled_.push_back(s);
}

int32_t StepBuilder::add_known_rows(const ActiveSeq& a, int32_t n) {
  StepPlan& plan = builder_.plan();
  const int32_t begin = plan.num_rows();
  for (int32_t k = 0; k < n; ++k) {
    plan.inputs.push_back(FeedToken{a.seq.tokens[static_cast<size_t>(a.seq.seq_len + k)]});
    plan.positions.push_back(a.seq.seq_len + k);
  }
  return begin;
}

// An embedding's chunk: a sum output on each (mean), the first row's state
// (CLS) or the prompt's last row's (last).
void StepBuilder::add_embedding(ActiveSeq& a, size_t idx, int32_t n) {
  StepPlan& plan = builder_.plan();
  const int32_t begin = add_known_rows(a, n);
  builder_.add_seq(begin, n, a.seq.seq_len, a.seq.block_table, a.seq.state_slot, false, 0, a.seq.adapter_slot);
  Scheduled s{idx, n, std::nullopt};
  s.embeds = true;
  std::optional<OutputRow> out;
  switch (*a.embed.pooling) {
    case Pooling::kMean: out = OutputRow{begin + n - 1, OutputKind::kHiddenSum}; break;
    case Pooling::kCls:
      if (a.seq.seq_len == 0) out = OutputRow{begin, OutputKind::kHidden};
      break;
    case Pooling::kLast:
      if (a.seq.seq_len + n == a.out.prompt_len) out = OutputRow{begin + n - 1, OutputKind::kHidden};
      break;
    case Pooling::kNone: break;  // refused at submit
  }
  if (out.has_value()) {
    s.output = static_cast<int32_t>(plan.outputs.size());
    plan.outputs.push_back(*out);
  }
  scheduled_.push_back(s);
}

void StepBuilder::add(ActiveSeq& a, size_t idx, int32_t n) {
  if (is_embedding(a)) return add_embedding(a, idx, n);
  if (pending_tokens(a) == 1 && n > 1) return add_verify(a, idx, n);
  a.spec.drafts.clear();  // given no room: this step decodes alone
  StepPlan& plan = builder_.plan();
  const int32_t begin = add_known_rows(a, n);
  const bool output = a.seq.seq_len + n == static_cast<int32_t>(a.seq.tokens.size());
  builder_.add_seq(begin, n, a.seq.seq_len, a.seq.block_table, a.seq.state_slot, false,
                   output ? mtp_chain_for(a, 0, mtp_drafts_) : 0, a.seq.adapter_slot);
  Scheduled s{idx, n, std::nullopt};
  add_prompt_outputs(a, begin, n, s);
  if (output) {
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
    if (q < a.logprobs.prompt_next || q >= a.out.prompt_len) continue;
    if (s.num_prompt_outputs == 0) s.first_predicted = q;
    plan.outputs.push_back(OutputRow{begin + k, OutputKind::kLogits});
    ++s.num_prompt_outputs;
  }
}

bool StepBuilder::build(std::vector<ActiveSeq>& active, const DeviceInfo& info, KvManager& kv,
                        int32_t max_batch_tokens) {
  builder_.begin(info.mtp_chain_seqs).mtp_guesses = mtp_guesses_;
  mtp_drafts_ = mtp_guesses_ ? info.mtp_drafts : std::min(info.mtp_drafts, 1);  // no guesses: no chains
  scheduled_.clear();
  views_.clear();
  for (const ActiveSeq& a : active) {
    views_.push_back(RowView{a.status.finished, a.seq.seq_len, static_cast<int32_t>(a.seq.tokens.size()),
                             static_cast<int32_t>(a.seq.block_table.size()), a.seq.num_released_blocks,
                             a.queue.admit_order, wants_prompt_logprobs(a), a.logprobs.prompt_next,
                             a.out.prompt_len, static_cast<int32_t>(a.spec.drafts.size()), is_embedding(a),
                             !a.embed.kv_shareable});
  }
  const StepLimits limits{max_batch_tokens, info.max_outputs, kv.num_blocks(), kv.num_free_blocks()};
  choose_step_rows(views_, limits, rows_, order_);
  StepPlan& plan = builder_.plan();
  kv.begin_step();
  for (const RowChoice& r : rows_) {
    ActiveSeq& a = active[r.active_idx];
    const int32_t n = cut_at_snapshot(a, r.num_rows, kv.next_prompt_snapshot(a.seq, a.out.prompt_len));
    const Admit got = kv.reserve(a.seq, a.seq.seq_len + n);
    MET_CHECK(got == Admit::kNow, "seq {}: reserving {} rows the step chose failed", a.seq.id.value(), n);
    if (const std::optional<StateCopy> c = kv.take_restore(a.seq)) plan.state_restores.push_back(*c);
    if (const std::optional<StateCopy> c = snapshot_after(a, n, kv)) plan.state_snapshots.push_back(*c);
    add(a, r.active_idx, n);
  }
  builder_.finish();
  return !scheduled_.empty();
}

// A prompt chunk that would run past the next snapshot boundary (`next`, 0:
// none) stops there, so the step's state is the prefix's at the boundary
// (hybrid prefix cache).
int32_t StepBuilder::cut_at_snapshot(const ActiveSeq& a, int32_t num_rows, int32_t next) {
  if (next <= a.seq.seq_len) return num_rows;
  return std::min(num_rows, next - a.seq.seq_len);
}

// The snapshot due after a's n rows of this step: a prompt chunk's at its
// boundary; past the prompt, the rolling one at a block boundary of known
// tokens (a verify step's draft rows may be rejected: no prefix's state).
std::optional<StateCopy> StepBuilder::snapshot_after(const ActiveSeq& a, int32_t n, KvManager& kv) {
  const int32_t end = a.seq.seq_len + n;
  if (end <= a.out.prompt_len) return kv.prompt_snapshot_due(a.seq, end, a.out.prompt_len);
  const bool verify = pending_tokens(a) == 1 && n > 1;
  if (verify || is_embedding(a)) return std::nullopt;
  return kv.decode_snapshot_due(a.seq, end);
}

bool StepBuilder::is_decode_only(size_t num_active) const {
  if (scheduled_.size() != num_active) return false;
  for (size_t i = 0; i < scheduled_.size(); ++i) {
    const Scheduled& s = scheduled_[i];
    if (s.active_idx != i || s.num_rows != 1 || !s.output.has_value() || s.embeds) return false;
  }
  return true;
}

}  // namespace met
