// Thinking control. Tested by tests/scheduler/thinking_test.cc.
#include "scheduler/thinking.h"

#include <algorithm>

#include "sampling/repetition_detector.h"

namespace met {
namespace {

// The watchdog looks every few tokens (the detector is quadratic in the
// longest period).
constexpr int32_t kWatchdogEvery = 8;

std::optional<int32_t> episode_budget(const ThinkingConfig& c, const ThinkingState& s) {
  if (s.spontaneous && c.spontaneous_budget.has_value()) return c.spontaneous_budget;
  return c.budget;
}

// Whether `output` (outside thinking) just opened thinking.
bool opens_thinking(const ThinkingConfig& c, std::span<const TokenId> output) {
  if (c.start_sequence.empty()) return output.back() == c.think_start;
  const size_t n = c.start_sequence.size();
  return output.size() >= n && std::equal(c.start_sequence.begin(), c.start_sequence.end(), output.end() - n);
}

void end_thinking(ThinkingState& s, ThinkEndCause cause) {
  s.inside = false;
  s.last_end = cause;
  s.end_written = 0;
  s.ending_cause = ThinkEndCause::kNone;
}

// think_end inside thinking: thinking ends, or its end sequence begins.
void think_end_taken(const ThinkingConfig& c, ThinkingState& s, ThinkEndCause forced_by) {
  const ThinkEndCause cause = forced_by == ThinkEndCause::kNone ? ThinkEndCause::kModel : forced_by;
  if (forced_by == ThinkEndCause::kWatchdog) ++s.watchdog_fires;
  const bool continues =
      c.end_sequence.size() > 1 && (forced_by != ThinkEndCause::kNone || c.end_sequence_after_model_end);
  if (!continues) {
    end_thinking(s, cause);
    return;
  }
  s.end_written = 1;
  s.ending_cause = cause;
}

// The state after `output`'s last token.
void advance(const ThinkingConfig& c, ThinkingState& s, std::span<const TokenId> output, ThinkEndCause forced_by) {
  const TokenId t = output.back();
  if (s.inside) {
    if (s.end_written > 0) {
      if (++s.end_written == static_cast<int32_t>(c.end_sequence.size())) end_thinking(s, s.ending_cause);
      return;
    }
    if (t == c.think_end) {
      think_end_taken(c, s, forced_by);
      return;
    }
    ++s.episode_tokens;
    ++s.reasoning_tokens;
    return;
  }
  if (opens_thinking(c, output)) {
    s.inside = true;
    s.spontaneous = true;
    s.episode_tokens = 0;
    s.episode_start = static_cast<int32_t>(output.size());
  }
}

}  // namespace

ThinkingState initial_thinking_state(const ThinkingConfig& c) {
  ThinkingState s;
  s.inside = c.starts_inside;
  s.next_forced = force_cause(c, s, {});
  return s;
}

ThinkEndCause force_cause(const ThinkingConfig& c, const ThinkingState& s, std::span<const TokenId> output) {
  if (!s.inside) return ThinkEndCause::kNone;
  if (s.end_written > 0) return s.ending_cause;
  if (const std::optional<int32_t> b = episode_budget(c, s); b.has_value() && s.episode_tokens >= *b) {
    return ThinkEndCause::kBudget;
  }
  if (c.watchdog && s.episode_tokens > 0 && s.episode_tokens % kWatchdogEvery == 0) {
    const std::span<const TokenId> episode = output.subspan(static_cast<size_t>(s.episode_start));
    if (repeating_tail(episode).has_value()) return ThinkEndCause::kWatchdog;
  }
  return ThinkEndCause::kNone;
}

TokenId forced_think_token(const ThinkingConfig& c, const ThinkingState& s) {
  if (s.end_written > 0) return c.end_sequence[static_cast<size_t>(s.end_written)];
  return c.think_end;
}

void observe_thinking_token(const ThinkingConfig& c, ThinkingState& s, std::span<const TokenId> output,
                            ThinkEndCause forced_by) {
  advance(c, s, output, forced_by);
  s.next_forced = force_cause(c, s, output);
}

}  // namespace met