// Speculative decoding in the scheduler. Tested by tests/scheduler/speculation_test.cc.
#include "scheduler/speculation.h"

#include <algorithm>

#include "spec/prompt_lookup.h"

namespace met {

bool can_speculate(const ActiveSeq& a) {
  return !a.status.finished && pending_tokens(a) == 1 && !a.seq.state_slot.has_value() && !needs_logits(a) &&
         !suppressing_stops(a) && !wants_prompt_logprobs(a);
}

void propose_drafts(ActiveSeq& a, const SpecOptions& options, size_t max_seq_len) {
  a.spec.drafts.clear();
  a.spec.drafts_from_prediction = false;
  if ((!options.enabled() && !a.spec.prediction.has_value()) || !can_speculate(a)) return;
  // k drafts commit up to k + 1 tokens: within the output budget and the
  // context (the rows' positions end at tokens.size() - 1 + k).
  const auto room = static_cast<int64_t>(max_seq_len) - static_cast<int64_t>(a.seq.tokens.size());
  const int64_t budget = std::min<int64_t>(int64_t{a.limits.remaining} - 1, room);
  if (a.spec.prediction.has_value()) {
    const int64_t cap = std::min<int64_t>(options.prediction_draft, budget);
    if (cap > 0) a.spec.prediction->propose(static_cast<int32_t>(cap), a.spec.drafts);
    a.spec.drafts_from_prediction = !a.spec.drafts.empty();
    if (a.spec.drafts_from_prediction) return;
  }
  const int64_t cap = std::min<int64_t>(options.max_draft, budget);
  if (cap <= 0) return;
  const PromptLookupOptions lookup{options.min_ngram, options.max_ngram, static_cast<int32_t>(cap)};
  propose_prompt_lookup(a.seq.tokens, lookup, a.spec.drafts);
}

void settle_verify(const SchedIo& io, ActiveSeq& a, int32_t first_output, StepResult& result,
                   PickScratch& scratch, size_t max_seq_len) {
  const int32_t base = a.seq.seq_len;
  const auto num_drafts = static_cast<int32_t>(a.spec.drafts.size());
  const size_t output_before = a.out.tokens.size();
  a.spec.verifying = true;
  int32_t accepted = 0;
  for (int32_t j = 0; j <= num_drafts; ++j) {
    // Row j's input was draft j - 1, committed in place: its output is the
    // next token, unless the sequence ended or its next token is no longer
    // the argmax's to give (a forced think token, a grammar, min_tokens).
    if (j > 0 && (a.status.finished || needs_logits(a) || suppressing_stops(a))) break;
    a.seq.seq_len = base + j + 1;
    const TokenId token = pick_token(a, result, static_cast<size_t>(first_output + j), false, scratch);
    commit_token(io, a, token, max_seq_len);
    const bool kept = j < num_drafts && token == a.spec.drafts[static_cast<size_t>(j)];
    if (kept) ++accepted;
    if (!kept || a.status.finished) break;
  }
  a.spec.verifying = false;
  if (a.spec.prediction.has_value()) {
    const std::span<const TokenId> committed(a.out.tokens.data() + output_before, a.out.tokens.size() - output_before);
    a.spec.prediction->on_verified(a.spec.drafts_from_prediction ? num_drafts : 0, committed);
  }
  a.spec.num_drafted += num_drafts;
  a.spec.num_accepted += accepted;
  io.tel.speculated(num_drafts, accepted);
  a.spec.drafts.clear();
  io.kv.apply(Rollback{&a.seq});
}

}  // namespace met
