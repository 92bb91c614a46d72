// Committing one sampled token to its sequence (commit_token; `settle` is the
// reference's name for the lane's step-level work, decode_lane.h): the guards
// that run per token (EOS and stop ids, min_tokens, stop strings, max_tokens,
// the context ceiling) and the delta streamed to the client.
// Invariants: EOS text and stop-string text never reach the client; a token is
// appended to output_tokens and seq.tokens together; the sequence is marked
// finished on the token that ends it and gets no further token.
// Threading: engine thread only. Tested by tests/scheduler/commit_token_test.cc.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "backend/step_plan.h"
#include "scheduler/active_seq.h"
#include "scheduler/io.h"

namespace met {

// True while EOS and stop ids must not be sampled (output < min_tokens).
bool suppressing_stops(const ActiveSeq& a);

// Whether the grammar masks `a`'s next token (it has one, outside thinking).
bool grammar_active(const ActiveSeq& a);

// Why `a`'s next token is think_end, forced (kNone: it is picked).
ThinkEndCause forced_think_end(const ActiveSeq& a);

// Whether the host must see the row's logits: a sampled row, one that
// reports logprobs, one under a grammar, one whose token is forced; a greedy
// row takes the device's argmax, with EOS and stop ids banned on the device
// while suppressing_stops.
bool needs_logits(const ActiveSeq& a);

// Appends `a`'s output row to `plan`, banning EOS and stop ids on the device
// while suppressing_stops(a) (the step builder and the lane both use it).
// `ahead`: the row's token comes that many tokens after a's next (a verify
// row), so the ban holds while the output is still short of min_tokens then.
void add_output_row(StepPlan& plan, int32_t row, OutputKind kind, const ActiveSeq& a, int32_t ahead = 0);

// Sets the logits of EOS and stop ids to -inf while suppressing_stops(a).
void suppress_stops(const ActiveSeq& a, std::span<float> logits);

// Appends `token` to `a`, streams its text and decides whether `a` ends here.
void accept_token(const SchedIo& io, ActiveSeq& a, TokenId token, size_t max_seq_len);

// Per-lane scratch for pick_token, reused across tokens.
struct PickScratch {
  std::vector<float> raw_row;       // the raw row, for logprobs
  std::vector<uint64_t> mask_bits;  // the grammar's allowed tokens
};

// The token a step produced for output `index`: the forced think token (thinking.h), the
// device's argmax, or a draw from the row's logits when `use_logits` (EOS
// masked under min_tokens, the grammar's mask applied). With logprobs asked
// for, picked_logprob is set from the raw row. A grammar that cannot be
// followed (GrammarMatcher::failure()) fails `a` (a 400 naming its field)
// and nothing is picked.
TokenId pick_token(ActiveSeq& a, StepResult& result, size_t index, bool use_logits, PickScratch& scratch);

// Commits a step's token to `a`, unless pick_token failed `a` (there is no
// token), or the client cancelled or the deadline passed while the step ran:
// then the token is dropped and `a` ends as it would have before the step
// (so the lanes agree token for token).
void commit_token(const SchedIo& io, ActiveSeq& a, TokenId token, size_t max_seq_len);

}  // namespace met
