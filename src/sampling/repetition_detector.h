// repeating_tail: the repetition detector behind the think watchdog. It
// reports the shortest period p (min_period <= p <= max_period) such that the
// last p * min_repeats tokens of `tokens` are one block of p tokens repeated
// min_repeats times back to back, e.g. a model that writes "Wait, let me
// check again." over and over while thinking. Periods below min_period are
// not looked for, so a short loop counts only once it spans
// min_period * min_repeats tokens (a run of one token reads as period
// min_period).
// Cost: O(max_period * max_period * min_repeats) compares at worst; callers
// check every few tokens.
// Threading: pure. Tested by tests/sampling/repetition_detector_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "core/ids.h"

namespace met {

struct RepetitionLimits {
  int32_t min_period = 4;
  int32_t max_period = 64;
  int32_t min_repeats = 4;
};

std::optional<int32_t> repeating_tail(std::span<const TokenId> tokens, const RepetitionLimits& limits = {});

}  // namespace met
