// repeating_tail. Tested by tests/sampling/repetition_detector_test.cc.
#include "sampling/repetition_detector.h"

namespace met {

std::optional<int32_t> repeating_tail(std::span<const TokenId> tokens, const RepetitionLimits& limits) {
  const auto n = static_cast<int64_t>(tokens.size());
  for (int32_t p = limits.min_period; p <= limits.max_period; ++p) {
    const int64_t span = static_cast<int64_t>(p) * limits.min_repeats;
    if (span > n) break;
    const int64_t start = n - span;
    bool repeats = true;
    for (int64_t i = start + p; i < n && repeats; ++i) repeats = tokens[static_cast<size_t>(i)] == tokens[static_cast<size_t>(i - p)];
    if (repeats) return p;
  }
  return std::nullopt;
}

}  // namespace met
