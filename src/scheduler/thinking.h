// Thinking control: where a sequence stands with respect to its model's
// think markers, and when the scheduler forces the think-end token.
//   - A sequence is inside thinking from the start when the rendered prompt
//     ended with the think-start marker (ThinkingConfig::starts_inside), or
//     from the moment it samples think_start itself ("spontaneous").
//   - Tokens sampled inside (not the markers) are reasoning tokens
//     (usage.completion_tokens_details.reasoning_tokens).
//   - The think-end token is forced, instead of sampling, when the current
//     thinking has used its budget (`budget`, or `spontaneous_budget` for
//     thinking the model opened by itself, e.g. a model asked not to think),
//     or when the watchdog sees the thinking repeat itself
//     (sampling/repetition_detector.h): the reference's force_end_thinking,
//     spontaneous_think_budget and think watchdog. The answer then continues.
//   - Markers of several tokens (harmony, ThinkingConfig::start_sequence and
//     end_sequence): thinking opens when the output ends with the start
//     sequence; ending it writes the end sequence whole, each token after
//     think_end forced (cause kModel when the model sampled think_end), and
//     thinking lasts until the last one.
//   - Grammar masks apply only outside thinking.
// Decisions are pure functions of the config and the state; the scheduler
// applies them (commit_token.cc).
// Threading: plain data, engine thread. Tested by tests/scheduler/thinking_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "core/ids.h"
#include "request/thinking_config.h"

namespace met {

// Why thinking ended (kModel: the model sampled think_end); as a force
// cause, why the next token is forced (kModel: it continues an end sequence
// the model began).
enum class ThinkEndCause : uint8_t { kNone, kModel, kBudget, kWatchdog };

struct ThinkingState {
  bool inside = false;
  bool spontaneous = false;     // the current thinking was opened by the model
  int32_t episode_tokens = 0;   // reasoning tokens of the current thinking
  int32_t reasoning_tokens = 0; // over the whole output
  int32_t episode_start = 0;    // output index where the current thinking's tokens begin
  ThinkEndCause last_end = ThinkEndCause::kNone;
  int32_t watchdog_fires = 0;
  // Tokens of ThinkingConfig::end_sequence written (0: not ending), and why
  // it is being written.
  int32_t end_written = 0;
  ThinkEndCause ending_cause = ThinkEndCause::kNone;
  // force_cause for the next token, decided once when the state last changed
  // (initial_thinking_state, observe_thinking_token): the scheduler asks for
  // it several times per token and the watchdog's check is not free.
  ThinkEndCause next_forced = ThinkEndCause::kNone;
};

ThinkingState initial_thinking_state(const ThinkingConfig& c);

// Whether the next token must be think_end: the budget is used up, or the
// watchdog sees the current thinking loop. `output` is the output so far.
ThinkEndCause force_cause(const ThinkingConfig& c, const ThinkingState& s, std::span<const TokenId> output);

// The token to force when force_cause is not kNone: think_end, or the end
// sequence's next token.
TokenId forced_think_token(const ThinkingConfig& c, const ThinkingState& s);

// Advances `s` past the token just appended to `output` (its last element)
// and decides next_forced. `forced_by` says why the token was forced (kNone:
// it was sampled).
void observe_thinking_token(const ThinkingConfig& c, ThinkingState& s, std::span<const TokenId> output,
                            ThinkEndCause forced_by);

}  // namespace met
