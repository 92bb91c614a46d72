// commit_token and the per-token guards. Tested by tests/scheduler/commit_token_test.cc.
#include "scheduler/commit_token.h"

#include <algorithm>

#include <fmt/format.h>
#include <limits>

#include "scheduler/finish_reason.h"
#include "core/check.h"
#include "scheduler/lifecycle.h"

namespace met {

bool suppressing_stops(const ActiveSeq& a) {
  return static_cast<int32_t>(a.out.tokens.size()) < a.limits.min_tokens;
}

bool grammar_active(const ActiveSeq& a) { return a.gram.matcher.has_value() && !a.think.state.inside; }

ThinkEndCause forced_think_end(const ActiveSeq& a) {
  return a.think.config.has_value() ? a.think.state.next_forced : ThinkEndCause::kNone;
}

bool needs_logits(const ActiveSeq& a) {
  return !a.sampler.is_greedy() || a.logprobs.per_token.has_value() || grammar_active(a) ||
         forced_think_end(a) != ThinkEndCause::kNone;
}

void add_output_row(StepPlan& plan, int32_t row, OutputKind kind, const ActiveSeq& a, int32_t ahead) {
  OutputRow out{row, kind};
  if (static_cast<int32_t>(a.out.tokens.size()) + ahead < a.limits.min_tokens) {
    out.banned_begin = static_cast<int32_t>(plan.banned.size());
    out.num_banned = static_cast<int32_t>(a.limits.eos_tokens.size());
    plan.banned.insert(plan.banned.end(), a.limits.eos_tokens.begin(), a.limits.eos_tokens.end());
  }
  plan.outputs.push_back(out);
}

void suppress_stops(const ActiveSeq& a, std::span<float> logits) {
  if (!suppressing_stops(a)) return;
  for (TokenId t : a.limits.eos_tokens) {
    if (t >= 0 && static_cast<size_t>(t) < logits.size()) {
      logits[static_cast<size_t>(t)] = -std::numeric_limits<float>::infinity();
    }
  }
}

namespace {

// Fails `a` with its matcher's failure(), naming the field the grammar came
// from; false when the matcher has not failed.
bool fail_on_grammar(ActiveSeq& a) {
  const std::optional<std::string>& failure = a.gram.matcher->failure();
  if (!failure.has_value()) return false;
  fail_sequence(a, *failure, a.gram.triggered_active ? "tools" : a.gram.field);
  return true;
}

// Sets every logit the grammar does not allow now to -inf, a 64-token word
// at a time (a word the grammar allows whole is skipped). False: the grammar
// cannot be followed (GrammarMatcher::failure()), and `a` is failed instead.
bool apply_grammar_mask(ActiveSeq& a, std::span<float> row, std::vector<uint64_t>& bits) {
  bits.resize((row.size() + 63) / 64);
  a.gram.matcher->fill_mask(bits);
  if (fail_on_grammar(a)) return false;
  for (size_t w = 0; w < bits.size(); ++w) {
    if (bits[w] == ~uint64_t{0}) continue;
    const size_t end = std::min(row.size(), (w + 1) * 64);
    for (size_t t = w * 64; t < end; ++t) {
      if (((bits[w] >> (t % 64)) & 1) == 0) row[t] = -std::numeric_limits<float>::infinity();
    }
  }
  return true;
}

}  // namespace

TokenId pick_token(ActiveSeq& a, StepResult& result, size_t index, bool use_logits, PickScratch& scratch) {
  a.logprobs.picked.reset();
  a.think.forced_by = forced_think_end(a);
  if (!use_logits) {
    MET_CHECK(a.think.forced_by == ThinkEndCause::kNone && !grammar_active(a), "seq {}: argmax for a controlled row",
              a.seq.id.value());
    return result.argmax[index];
  }
  const auto vocab = static_cast<size_t>(result.vocab_size);
  std::span<float> row(result.logits.data() + index * vocab, vocab);
  if (a.logprobs.per_token.has_value()) scratch.raw_row.assign(row.begin(), row.end());
  TokenId token = 0;
  if (a.think.forced_by != ThinkEndCause::kNone) {
    token = forced_think_token(*a.think.config, a.think.state);
  } else {
    suppress_stops(a, row);
    if (grammar_active(a) && !apply_grammar_mask(a, row, scratch.mask_bits)) return 0;  // commit_token skips it
    const std::span<const TokenId> prompt(a.seq.tokens.data(), static_cast<size_t>(a.out.prompt_len));
    token = a.sampler.sample(row, prompt, a.out.tokens);
  }
  if (a.logprobs.per_token.has_value()) {
    a.logprobs.picked = token_logprob(scratch.raw_row, token, *a.logprobs.per_token);
  }
  return token;
}

void commit_token(const SchedIo& io, ActiveSeq& a, TokenId token, size_t max_seq_len) {
  if (a.status.error.has_value()) return;  // pick_token failed the sequence: there is no token
  if (a.sink.cancelled()) {
    fail_sequence(a, a.sink.cancel_reason());
    return;
  }
  if (a.limits.timeout_at.has_value() && io.clock.now() >= *a.limits.timeout_at) {
    a.status.guard_stop = GuardStop::kRequestTimeout;
    a.status.finished = true;
    return;
  }
  accept_token(io, a, token, max_seq_len);
}

namespace {

// The token joins the output and the sequence; its time is recorded.
void record_token(const SchedIo& io, ActiveSeq& a, TokenId token) {
  const TimePoint now = io.clock.now();
  const bool first = !a.timing.decode_start.has_value();
  if (first) a.timing.decode_start = now;
  a.timing.last_token_time = now;
  a.out.tokens.push_back(token);
  a.seq.tokens.push_back(token);
  if (first) io.tel.request_event(request_event_of(a, RequestEventKind::kFirstToken));
  --a.limits.remaining;
  if (a.spec.prediction.has_value() && !a.spec.verifying) a.spec.prediction->on_committed({&token, 1});
}

// The grammar side of a token: the matcher takes it (false: it broke the
// grammar), a complete grammar ends the output or, if it was triggered, lets
// text run free again; a trigger token starts its grammar; the tool-call
// close token ends the output.
bool advance_grammar(ActiveSeq& a, TokenId token, bool under_grammar) {
  if (under_grammar && !a.gram.matcher->accept_token(token)) return false;
  if (under_grammar && (a.gram.matcher->must_end() || a.gram.matcher->is_terminated())) {
    if (a.gram.triggered_active) {
      a.gram.matcher.reset();  // the triggered part is complete: free text again
      a.gram.triggered_active = false;
    } else {
      a.status.finished = true;
    }
  }
  const bool triggers = !under_grammar && !a.think.state.inside && a.gram.triggered.has_value() &&
                        token == a.gram.triggered->trigger && !a.gram.matcher.has_value();
  if (triggers) {
    a.gram.matcher.emplace(*a.gram.triggered->grammar, *a.gram.trie);
    a.gram.triggered_active = true;
  }
  if (a.gram.tool_call_end_token.has_value() && token == *a.gram.tool_call_end_token) a.status.finished = true;
  return true;
}

// The token's delta to the client: its id, its logprob, the prompt logprobs
// not yet sent, and its text (none for a stop token, which ends the output;
// a stop string found in the text ends it too).
void stream_token(const SchedIo& io, ActiveSeq& a, TokenId token, bool is_stop_token) {
  DeltaEvent& delta = a.out.delta;  // reused: no allocation per token
  delta.tokens.assign(1, token);
  delta.text.clear();
  delta.logprobs.clear();
  delta.prompt_logprobs.clear();
  if (a.logprobs.picked.has_value() && !is_stop_token) delta.logprobs.push_back(std::move(*a.logprobs.picked));
  a.logprobs.picked.reset();
  if (!a.logprobs.prompt_entries.empty()) delta.prompt_logprobs.swap(a.logprobs.prompt_entries);
  a.logprobs.prompt_entries.clear();
  if (is_stop_token) {
    a.status.finished = true;  // its text is not part of the output
  } else if (a.out.detok.has_value()) {
    if (const std::optional<size_t> stop = a.out.detok->push(token, delta.text)) {
      a.status.stop_string_hit = true;
      a.status.stop_string_index = stop;
      a.status.finished = true;
    }
  }
  io.req.delta(a.sink, delta);
}

}  // namespace

void accept_token(const SchedIo& io, ActiveSeq& a, TokenId token, size_t max_seq_len) {
  record_token(io, a, token);
  const std::vector<TokenId>& stops = a.limits.eos_tokens;
  const bool is_stop_token = std::find(stops.begin(), stops.end(), token) != stops.end();
  const bool under_grammar = grammar_active(a);
  if (a.think.config.has_value()) {
    observe_thinking_token(*a.think.config, a.think.state, a.out.tokens, a.think.forced_by);
  }
  a.think.forced_by = ThinkEndCause::kNone;
  if (!advance_grammar(a, token, under_grammar)) {
    // The mask allows only what the matcher takes: short of its failure()
    // this is a bug, and the output would break its grammar, so the request
    // fails.
    if (!fail_on_grammar(a)) {
      fail_sequence(a, fmt::format("internal error: token {} breaks the request's grammar", token));
    }
    return;
  }
  stream_token(io, a, token, is_stop_token);
  if (hard_ceiling_hit(static_cast<size_t>(std::max(a.limits.remaining, 0)), a.seq.tokens.size(), max_seq_len)) {
    a.status.finished = true;
  }
}

}  // namespace met
