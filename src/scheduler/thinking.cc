// Thinking control. Tested by tests/scheduler/thinking_test.cc.
#include "scheduler/thinking.h"

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

// The state after `output`'s last token.
void advance(const ThinkingConfig& c, ThinkingState& s, std::span<const TokenId> output, ThinkEndCause forced_by) {
  const TokenId t = output.back();
  if (s.inside) {
    if (t == c.think_end) {
      s.inside = false;
      s.last_end = forced_by == ThinkEndCause::kNone ? ThinkEndCause::kModel : forced_by;
      if (forced_by == ThinkEndCause::kWatchdog) ++s.watchdog_fires;
      return;
    }
    ++s.episode_tokens;
    ++s.reasoning_tokens;
    return;
  }
  if (t == c.think_start) {
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
  if (const std::optional<int32_t> b = episode_budget(c, s); b.has_value() && s.episode_tokens >= *b) {
    return ThinkEndCause::kBudget;
  }
  if (c.watchdog && s.episode_tokens > 0 && s.episode_tokens % kWatchdogEvery == 0) {
    const std::span<const TokenId> episode = output.subspan(static_cast<size_t>(s.episode_start));
    if (repeating_tail(episode).has_value()) return ThinkEndCause::kWatchdog;
  }
  return ThinkEndCause::kNone;
}

void observe_thinking_token(const ThinkingConfig& c, ThinkingState& s, std::span<const TokenId> output,
                            ThinkEndCause forced_by) {
  advance(c, s, output, forced_by);
  s.next_forced = force_cause(c, s, output);
}

}  // namespace met