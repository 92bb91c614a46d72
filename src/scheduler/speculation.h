// Speculative decoding in the scheduler (the engine side of spec/): a
// decoding sequence that has drafts runs one verify row per draft after its
// decode row, each with an output, in the same step. The step's argmax at row
// j is the token plain decoding would commit after the first j drafts, so the
// scheduler commits row 0's token, then row j's for as long as each draft
// equals the token committed before it (spec/acceptance.h's greedy rule),
// and gives back the blocks the rejected rows reserved. The output is the
// output without speculation, token for token; a step commits 1 to k + 1
// tokens for k drafts.
// Drafts come from the request's predicted output (OpenAI's Predicted
// Outputs, spec/prediction.h) while the output is in step with it, else, when
// the server turns it on, from prompt lookup (spec/prompt_lookup.h), for greedy rows
// that take the device's argmax (no logprobs, grammar, forced think token or
// min_tokens ban pending) of models without recurrent state (whose state a
// rejected row would have advanced). A verify step runs in the synchronous
// path: the pipelined lane settles first when a sequence has drafts.
// Invariants: drafts live in ActiveSeq::spec for one step and are cleared at
// settle; a verify step's rejected rows never reach a sink, and their blocks
// are given back before the next step; seq_len only counts rows whose input
// was committed.
// Threading: engine thread only. Tested by tests/scheduler/speculation_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "backend/step_plan.h"
#include "scheduler/active_seq.h"
#include "scheduler/commit_token.h"
#include "scheduler/io.h"

namespace met {

// The most drafts one verify step checks per sequence.
inline constexpr int32_t kMaxDraftTokens = 32;

struct SpecOptions {
  int32_t max_draft = 0;  // drafts per step from prompt lookup; 0: no prompt lookup
  int32_t min_ngram = 2;  // shortest suffix of the history a lookup matches
  int32_t max_ngram = 5;  // longest suffix tried first
  // Drafts per step from a request's predicted output (always on: the
  // request asks for it).
  int32_t prediction_draft = 8;
  bool enabled() const { return max_draft > 0; }
};

// Whether `a` may run verify rows this step: a greedy argmax row of a model
// without recurrent state, one pending token, nothing controlling its next
// token.
bool can_speculate(const ActiveSeq& a);

// Replaces a.spec.drafts with the next tokens of a's predicted output, or
// (none, and prompt lookup on) prompt lookup's proposal for a's history,
// capped so the committed tokens stay within its output budget and
// max_seq_len; empty when `a` may not speculate.
void propose_drafts(ActiveSeq& a, const SpecOptions& options, size_t max_seq_len);

// Commits the tokens of `a`'s verify step: outputs [first_output, +
// num_drafts + 1) are its rows' argmax. Advances seq_len by the rows whose
// input was committed, releases the blocks reserved past them, tells a
// predicted output what was verified, clears the drafts and counts them.
void settle_verify(const SchedIo& io, ActiveSeq& a, int32_t first_output, StepResult& result,
                   PickScratch& scratch, size_t max_seq_len);

}  // namespace met
