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
// the server turns them on, from prompt lookup (spec/prompt_lookup.h) where it
// finds a match (it costs nothing), else from the model's own MTP block
// (one draft: what the step that committed the pending token predicted past
// it, SpecOptions::mtp), else from a draft model (spec/draft_model.h),
// capped by the request's max_draft_tokens and, for a sequence with
// recurrent state, by the rows its slot can replay (DeviceInfo::state_drafts):
// the device continues from the state after any verify row, so a rejected
// row's state is never the one the next step runs from.
// The draft budget decides how many drafts each sequence gets before the
// draft model runs, so the draft model only computes drafts that are
// verified. A verify step runs in the synchronous path: the pipelined lane
// settles first when a sequence has drafts.
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
#include "spec/draft_model.h"

namespace met {

struct SpecOptions {
  int32_t max_draft = 0;  // drafts per step from prompt lookup; 0: no prompt lookup
  int32_t min_ngram = 2;  // shortest suffix of the history a lookup matches
  int32_t max_ngram = 5;  // longest suffix tried first
  // Drafts per step from a request's predicted output (always on: the
  // request asks for it).
  int32_t prediction_draft = 16;
  // Drafts are trimmed to the draft budget (DraftPlanner); false: every
  // proposal is verified (for measuring what the budget saves).
  bool adaptive = true;
  // Drafts per step from a draft model (borrowed; null: none), for sequences
  // that neither a prediction nor prompt lookup gave drafts.
  DraftModel* draft_model = nullptr;
  int32_t model_draft = 4;
  // Drafts from the model's MTP block (the device runs it: DeviceInfo::mtp_drafts).
  bool mtp = false;
  bool enabled() const { return max_draft > 0 || mtp; }
};

// What bounds any sequence's drafts besides its request: the context, and
// for sequences with recurrent state the drafts one verify step may keep
// the state after (DeviceInfo::state_drafts).
struct DraftLimits {
  size_t max_seq_len = 0;
  int32_t state_drafts = 0;
};

// Whether `a` may run verify rows this step: a decoding sequence (one
// pending token, no prompt logprobs owed) whose request allows drafts.
bool can_speculate(const ActiveSeq& a);

// The most drafts `a` may verify in one step: committed tokens stay within
// its output budget and max_seq_len, drafts within its request's cap and,
// with recurrent state, within state_drafts.
int64_t draft_room(const ActiveSeq& a, const DraftLimits& limits);

// Replaces a.spec.drafts with the next tokens of a's predicted output, or
// (none, and prompt lookup on) prompt lookup's proposal for a's history, or
// (none, and options.mtp) the MTP block's draft, capped by draft_room; empty
// when `a` may not speculate.
void propose_drafts(ActiveSeq& a, const SpecOptions& options, const DraftLimits& limits);

// How many drafts a draft model would be asked for `a` (options.model_draft
// within draft_room), when neither a prediction nor prompt lookup gave any;
// 0 when there is no draft model or `a` may not speculate.
int32_t model_draft_offer(const ActiveSeq& a, const SpecOptions& options, const DraftLimits& limits);

// The scheduler's speculation across steps: the draft budget
// (spec/draft_budget.h) with its step cost model, fed every step's measured
// device time, and the scratch its allocation reuses.
class DraftPlanner {
 public:
  // Whether the step ahead runs drafts: kProbe (a step is in flight, the
  // lane asks whether to settle first) decides without running the draft
  // model; kPropose fills the drafts.
  enum class Mode : uint8_t { kProbe, kPropose };
  // Proposes every active sequence's drafts (propose_drafts, or an offer of
  // the draft model's), then keeps of each the prefix the draft budget gives
  // it, the draft model computing what it gives its offers (kPropose);
  // whether any sequence has drafts. The first call before each step counts
  // the drafts held back (TelPort::drafts_withheld) and lets the sequences
  // left without any (and those MTP would draft for that have no guesses,
  // the steps computing none) drift back towards trying; a second call for
  // the same step (the lane settled first) proposes again without counting.
  bool propose(std::vector<ActiveSeq>& active, const SpecOptions& options, const DraftLimits& limits, TelPort& tel,
               Mode mode);
  // The draft model gives back what it holds for sequences no longer in
  // `active` (finished, failed, preempted).
  void forget_retired(const std::vector<ActiveSeq>& active, const SpecOptions& options);
  // Whether the next step should compute the MTP block's guesses
  // (StepPlan::mtp_guesses): false when adaptive speculation would verify
  // none of them, were they there: the budget (draft_budget.h) given each
  // decoding sequence that may draft an offer of `device_mtp_drafts` drafts
  // at its acceptance rate, for the step after this one (whose explore
  // steps let every proposal stand, so guesses come back to be tried). True
  // while the cost is unknown, without MTP or adaptive speculation, and
  // while every sequence is prefilling.
  // Each sequence's SpecTrack::guesses_wanted is what the budget gives it
  // there (0 where it is not asked).
  bool mtp_guesses_pay(std::vector<ActiveSeq>& active, const SpecOptions& options, const DraftLimits& limits,
                       int32_t device_mtp_drafts);
  // Whether the step about to be built would verify guesses the step in
  // flight computes, so the lane should settle first to use them: the same
  // offers for this step (any, without adaptive speculation). Without it a
  // pipelined lane never drafts once guesses stop: the step that computes
  // them is launched ahead of the step that could verify them.
  bool inflight_guesses_stand(const std::vector<ActiveSeq>& active, const SpecOptions& options,
                              const DraftLimits& limits, int32_t device_mtp_drafts);
  // A step was launched: the next propose counts again.
  void step_launched() {
    counted_ = false;
    ++steps_;
  }
  // A step of `rows` rows took `busy_ns` of device time (0: not measured).
  void observe_step(int32_t rows, int64_t busy_ns) { cost_.observe(rows, busy_ns); }
  // A sequence verified `drafted` of the draft model's drafts and kept the
  // first `accepted`: the prior of every sequence's rate for its drafts.
  void observe_model_verify(int32_t drafted, int32_t accepted) { model_acceptance_.observe(drafted, accepted); }
  StepCostModel& cost() { return cost_; }

 private:
  // Keeps of each offer what given_ says, the draft model computing its
  // offers' (kPropose); counts what was withheld. Whether any has drafts.
  bool trim_to_budget(std::vector<ActiveSeq>& active, const SpecOptions& options, TelPort& tel, Mode mode);
  // guess_offers_: an offer of up to `device_mtp_drafts` guesses from each
  // decoding sequence that may draft; returns the decoding rows.
  int32_t collect_guess_offers(const std::vector<ActiveSeq>& active, const DraftLimits& limits,
                               int32_t device_mtp_drafts);
  // Whether the budget verifies any of guess_offers_ at `step`.
  bool guesses_stand(int32_t decode_rows, uint64_t step);

  bool counted_ = false;  // this step's withheld drafts are counted
  uint64_t steps_ = 0;    // steps launched
  StepCostModel cost_;
  DraftCost draft_cost_;  // the draft model's time per draft
  AcceptanceRate model_acceptance_;  // the draft model's recent verify steps, over all sequences
  std::vector<DraftOffer> guess_offers_;  // mtp_guesses_pay's scratch
  std::vector<size_t> guess_offered_;  // the active index of each of guess_offers_
  std::vector<int32_t> guess_given_;
  DraftBudgetScratch scratch_;
  std::vector<DraftOffer> offers_;
  std::vector<size_t> offered_;  // the index in `active` of each offer
  std::vector<bool> from_model_;  // each offer's drafts are the draft model's to compute
  std::vector<int32_t> given_;
  std::vector<DraftAsk> asks_;     // the draft model's, this step
  std::vector<uint64_t> live_;     // running sequences' ids (the draft model keeps only theirs)
};

// Remembers the MTP block's drafts past `token`, just committed from output
// `o` of `result` (StepResult::mtp_argmax, then the output's chain in
// StepResult::mtp_chain), when the block read that token (it reads the
// row's argmax); forgets any older ones otherwise.
void note_mtp_draft(ActiveSeq& a, const StepResult& result, size_t o, TokenId token);

// The chained MTP drafts (StepSeq::mtp_chain) to ask of a step that verifies
// `num_drafts` of a's drafts and has an output at a's last row: one more
// than it verifies, so a sequence whose drafts the budget keeps taking
// chains further (up to the device's DeviceInfo::mtp_drafts - 1), within
// the request's draft cap and its output budget. For a step that verifies
// none, one fewer than the drafts the budget would verify next
// (SpecTrack::guesses_wanted): drafts that only pay together (a device
// whose step with any draft costs much more than one without) are there
// to be given together. 0 for a sequence drafted by its prediction or
// owing prompt logprobs.
int32_t mtp_chain_for(const ActiveSeq& a, int32_t num_drafts, int32_t device_mtp_drafts);

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
