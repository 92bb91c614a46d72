// Per-token guards. Tested by tests/scheduler/settle_test.cc.
#include "scheduler/settle.h"

#include <algorithm>
#include <limits>

#include "scheduler/finish_reason.h"
#include "scheduler/lifecycle.h"

namespace met {

bool suppressing_stops(const ActiveSeq& a) {
  return static_cast<int32_t>(a.output_tokens.size()) < a.min_tokens;
}

bool needs_logits(const ActiveSeq& a) { return !a.sampler.is_greedy(); }

void add_output_row(StepPlan& plan, int32_t row, OutputKind kind, const ActiveSeq& a) {
  OutputRow out{row, kind};
  if (suppressing_stops(a)) {
    out.banned_begin = static_cast<int32_t>(plan.banned.size());
    out.num_banned = static_cast<int32_t>(a.eos_tokens.size());
    plan.banned.insert(plan.banned.end(), a.eos_tokens.begin(), a.eos_tokens.end());
  }
  plan.outputs.push_back(out);
}

void suppress_stops(const ActiveSeq& a, std::span<float> logits) {
  if (!suppressing_stops(a)) return;
  for (TokenId t : a.eos_tokens) {
    if (t >= 0 && static_cast<size_t>(t) < logits.size()) {
      logits[static_cast<size_t>(t)] = -std::numeric_limits<float>::infinity();
    }
  }
}

TokenId pick_token(ActiveSeq& a, StepResult& result, size_t index, bool use_logits) {
  if (!use_logits) return result.argmax[index];
  const auto vocab = static_cast<size_t>(result.vocab_size);
  std::span<float> row(result.logits.data() + index * vocab, vocab);
  suppress_stops(a, row);
  const std::span<const TokenId> prompt(a.seq.tokens.data(), static_cast<size_t>(a.prompt_len));
  return a.sampler.sample(row, prompt, a.output_tokens);
}

void commit_output(const SchedIo& io, ActiveSeq& a, TokenId token, size_t max_seq_len) {
  if (a.sink.cancelled()) {
    fail_sequence(a, "cancelled by the client");
    return;
  }
  if (a.timeout_at.has_value() && io.clock.now() >= *a.timeout_at) {
    a.guard_stop = GuardStop::kRequestTimeout;
    a.finished = true;
    return;
  }
  accept_token(io, a, token, max_seq_len);
}

void accept_token(const SchedIo& io, ActiveSeq& a, TokenId token, size_t max_seq_len) {
  const TimePoint now = io.clock.now();
  if (!a.decode_start) a.decode_start = now;
  a.last_token_time = now;
  a.output_tokens.push_back(token);
  a.seq.tokens.push_back(token);
  --a.remaining;

  const bool is_stop_token = std::find(a.eos_tokens.begin(), a.eos_tokens.end(), token) != a.eos_tokens.end();
  DeltaEvent delta;
  delta.tokens.push_back(token);
  if (is_stop_token) {
    a.finished = true;  // its text is not part of the output
  } else if (a.detok.has_value()) {
    DetokenizerStep step = a.detok->push(token);
    delta.text = std::move(step.text);
    if (step.stop.has_value()) {
      a.stop_string_hit = true;
      a.finished = true;
    }
  }
  io.req.delta(a.sink, std::move(delta));
  if (hard_ceiling_hit(static_cast<size_t>(std::max(a.remaining, 0)), a.seq.tokens.size(), max_seq_len)) {
    a.finished = true;
  }
}

}  // namespace met
