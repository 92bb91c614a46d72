// derive_finish_reason. Tested by tests/scheduler/finish_reason_test.cc.
#include "scheduler/finish_reason.h"

#include <algorithm>

namespace met {

const char* guard_stop_name(GuardStop g) {
  switch (g) {
    case GuardStop::kRequestTimeout: return "request_timeout";
    case GuardStop::kKvExhausted: return "kv_exhausted";
  }
  return "unknown";
}

std::string_view guard_stop_wire_reason(GuardStop guard) {
  switch (guard) {
    case GuardStop::kRequestTimeout: return kFinishTimeout;
    case GuardStop::kKvExhausted: return kFinishLength;
  }
  return kFinishLength;
}

bool hard_ceiling_hit(size_t remaining, size_t seq_len, size_t max_seq_len) {
  return remaining == 0 || (max_seq_len > 0 && seq_len >= max_seq_len);
}

std::string_view derive_finish_reason(const FinishInputs& in) {
  if (in.guard_stop == GuardStop::kRequestTimeout) return kFinishTimeout;
  if (in.last_tok.has_value()) {
    const TokenId t = *in.last_tok;
    if (std::find(in.eos_tokens.begin(), in.eos_tokens.end(), t) != in.eos_tokens.end()) return kFinishStop;
    // Guarded on a last token, so an empty output cannot match "no tool-call
    // token" and misreport "tool_calls".
    if (in.tool_call_end_token == t) return kFinishToolCalls;
    if (in.stop_string_hit) return kFinishStop;
  }
  if (in.guard_stop.has_value()) return guard_stop_wire_reason(*in.guard_stop);
  if (hard_ceiling_hit(in.remaining, in.seq_len, in.max_seq_len)) return kFinishLength;
  return kFinishStop;
}

}  // namespace met
