// Settling one sampled token into its sequence: the guards that run per token
// (EOS and stop ids, min_tokens, stop strings, max_tokens, the context
// ceiling) and the delta streamed to the client.
// Invariants: EOS text and stop-string text never reach the client; a token is
// appended to output_tokens and seq.tokens together; the sequence is marked
// finished on the token that ends it and gets no further token.
// Threading: engine thread only. Tested by tests/scheduler/settle_test.cc.
#pragma once

#include <cstddef>
#include <span>

#include "backend/step_plan.h"
#include "scheduler/active_seq.h"
#include "scheduler/io.h"

namespace met {

// True while EOS and stop ids must not be sampled (output < min_tokens).
bool suppressing_stops(const ActiveSeq& a);

// Whether sampling needs the row's logits; a greedy row takes the device's
// argmax, with EOS and stop ids banned on the device while suppressing_stops.
bool needs_logits(const ActiveSeq& a);

// Appends `a`'s output row to `plan`, banning EOS and stop ids on the device
// while suppressing_stops(a) (the step builder and the lane both use it).
void add_output_row(StepPlan& plan, int32_t row, OutputKind kind, const ActiveSeq& a);

// Sets the logits of EOS and stop ids to -inf while suppressing_stops(a).
void suppress_stops(const ActiveSeq& a, std::span<float> logits);

// Appends `token` to `a`, streams its text and decides whether `a` ends here.
void accept_token(const SchedIo& io, ActiveSeq& a, TokenId token, size_t max_seq_len);

// The token a step produced for output `index`: the device's argmax, or a
// draw from the row's logits when `use_logits` (EOS masked under min_tokens).
TokenId pick_token(ActiveSeq& a, StepResult& result, size_t index, bool use_logits);

// Commits a step's token to `a`, unless the client cancelled or the deadline
// passed while the step ran: then the token is dropped and `a` ends as it
// would have before the step (so the lanes agree token for token).
void commit_output(const SchedIo& io, ActiveSeq& a, TokenId token, size_t max_seq_len);

}  // namespace met
