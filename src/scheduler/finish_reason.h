// derive_finish_reason: the wire `finish_reason` of a completed sequence, as
// a pure function of plain values (the reference's precedence):
//   1. the request deadline → "timeout" (a truncation is never a natural
//      stop, even when the last token is EOS);
//   2. what the model sampled: EOS (or a stop id) → "stop", the tool-call
//      close token → "tool_calls", a stop string it completed → "stop";
//   3. any other guard → "length" (the output is incomplete);
//   4. the budget exhausted (max_tokens or the context ceiling) → "length";
//   5. otherwise "stop".
// An empty output never reads as "tool_calls" even when no tool-call token
// is configured. Stop strings are met's addition to step 2: text the model
// produced ended the output, which is a natural stop.
// Threading: pure. Tested by tests/scheduler/finish_reason_test.cc.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

#include "core/ids.h"
#include "scheduler/active_seq.h"

namespace met {

inline constexpr std::string_view kFinishStop = "stop";
inline constexpr std::string_view kFinishLength = "length";
inline constexpr std::string_view kFinishTimeout = "timeout";
inline constexpr std::string_view kFinishToolCalls = "tool_calls";

// "timeout" for the request deadline, "length" for every other guard.
std::string_view guard_stop_wire_reason(GuardStop guard);

// The output budget is spent, or the sequence reached the served context
// ceiling (max_seq_len 0: unlimited).
bool hard_ceiling_hit(size_t remaining, size_t seq_len, size_t max_seq_len);

struct FinishInputs {
  std::optional<GuardStop> guard_stop;
  std::optional<TokenId> last_tok;
  std::span<const TokenId> eos_tokens;
  std::optional<TokenId> tool_call_end_token;
  bool stop_string_hit = false;
  size_t remaining = 0;
  size_t seq_len = 0;
  size_t max_seq_len = 0;
};

std::string_view derive_finish_reason(const FinishInputs& in);

}  // namespace met
