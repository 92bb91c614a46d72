// Speculative decoding in the scheduler (the engine side of spec/): a
// decoding sequence that has drafts runs one verify row per draft after its
// decode row, each with an output, in the same step. Row j's output is what
// plain decoding would see after the first j drafts, so the scheduler picks
// row 0's token, then row j's for as long as each draft equals the token
// picked before it, and gives back the blocks the rejected rows reserved.
// Each token is picked exactly as plain decoding picks it: the device's
// argmax for a greedy row, else the whole sampler chain on the row's logits
// (penalties, DRY, bans, the grammar's mask, the forced think token,
// min_tokens), with the state the drafts before it left and the sampler's
// next draw. For drafts without probabilities (a point mass), accepting a
// draft when the draw equals it is spec/acceptance.h's rejection rule, and
// with the same seed the output is the output without speculation, token for
// token; a step commits 1 to k + 1 tokens for k drafts.
// Drafts come from the request's predicted output (OpenAI's Predicted
// Outputs, spec/prediction.h) while the output is in step with it, else, when
// the server turns it on, from prompt lookup (spec/prompt_lookup.h), capped by
// the request's max_draft_tokens, for models without recurrent state (whose
// state a rejected row would have advanced). A verify step runs in the
// synchronous path: the pipelined lane settles first when a sequence has
// drafts.
// Invariants: drafts live in ActiveSeq::spec for one step and are cleared at
// settle; a verify step's rejected rows never reach a sink, and their blocks
// are given back before the next step; seq_len only counts rows whose input
// was committed.
// Threading: engine thread only. Tested by tests/scheduler/speculation_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "backend/step_plan.h"
#include "scheduler/active_seq.h"
#include "scheduler/commit_token.h"
#include "scheduler/io.h"
#include "spec/draft_budget.h"

namespace met {

struct SpecOptions {
  int32_t max_draft = 0;  // drafts per step from prompt lookup; 0: no prompt lookup
  int32_t min_ngram = 2;  // shortest suffix of the history a lookup matches
  int32_t max_ngram = 5;  // longest suffix tried first
  // Drafts per step from a request's predicted output (always on: the
  // request asks for it).
  int32_t prediction_draft = 8;
  // Drafts are trimmed to the draft budget (DraftPlanner); false: every
  // proposal is verified (for measuring what the budget saves).
  bool adaptive = true;
  bool enabled() const { return max_draft > 0; }
};

// Whether `a` may run verify rows this step: a decoding sequence (one
// pending token, no prompt logprobs owed) of a model without recurrent state
// whose request allows drafts.
bool can_speculate(const ActiveSeq& a);

// Replaces a.spec.drafts with the next tokens of a's predicted output, or
// (none, and prompt lookup on) prompt lookup's proposal for a's history,
// capped so the committed tokens stay within its output budget and
// max_seq_len; empty when `a` may not speculate.
void propose_drafts(ActiveSeq& a, const SpecOptions& options, size_t max_seq_len);

// The scheduler's speculation across steps: the draft budget
// (spec/draft_budget.h) with its step cost model, fed every step's measured
// device time, and the scratch its allocation reuses.
class DraftPlanner {
 public:
  // Proposes every active sequence's drafts (propose_drafts), then keeps of
  // each the prefix the draft budget gives it; whether any sequence has
  // drafts. The first call before each step counts the drafts held back
  // (TelPort::drafts_withheld) and lets the sequences left without any drift
  // back towards trying; a second call for the same step (the lane settled
  // first) proposes again without counting.
  bool propose(std::vector<ActiveSeq>& active, const SpecOptions& options, size_t max_seq_len, TelPort& tel);
  // A step was launched: the next propose counts again.
  void step_launched() {
    counted_ = false;
    ++steps_;
  }
  // A step of `rows` rows took `busy_ns` of device time (0: not measured).
  void observe_step(int32_t rows, int64_t busy_ns) { cost_.observe(rows, busy_ns); }
  StepCostModel& cost() { return cost_; }

 private:
  bool counted_ = false;  // this step's withheld drafts are counted
  uint64_t steps_ = 0;    // steps launched
  StepCostModel cost_;
  DraftBudgetScratch scratch_;
  std::vector<DraftOffer> offers_;
  std::vector<size_t> offered_;  // the index in `active` of each offer
  std::vector<int32_t> given_;
};

// Appends the outputs of `a`'s verify rows [first_row, + num_rows): logits
// where the host picks a's tokens (needs_logits), else argmax, each with the
// EOS ban its place in the output calls for under min_tokens.
void add_verify_outputs(StepPlan& plan, int32_t first_row, int32_t num_rows, const ActiveSeq& a);

// Commits the tokens of `a`'s verify step, whose outputs are [first_output,
// + num_drafts + 1) of `outputs`: row by row, each picked as plain decoding
// would pick it, while the draft before it was the token picked. Advances
// seq_len by the rows whose input was committed, releases the blocks
// reserved past them, tells a predicted output what was verified, clears
// the drafts and counts them.
void settle_verify(const SchedIo& io, ActiveSeq& a, std::span<const OutputRow> outputs, int32_t first_output,
                   StepResult& result, PickScratch& scratch, size_t max_seq_len);

}  // namespace met
