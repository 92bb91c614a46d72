// DRY. Tested by tests/sampling/dry_test.cc.
#include "sampling/dry.h"

#include <algorithm>
#include <cmath>

namespace met {
namespace {

bool is_breaker(const DryConfig& c, TokenId t) {
  return std::find(c.sequence_breakers.begin(), c.sequence_breakers.end(), t) != c.sequence_breakers.end();
}

}  // namespace

void apply_dry(const DryConfig& config, std::span<const TokenId> history, TokenTally& scratch,
               std::span<float> logits) {
  scratch.reset(logits.size());
  const size_t n = history.size();
  if (n < 2 || is_breaker(config, history[n - 1])) return;
  const TokenId last = history[n - 1];
  for (size_t i = 0; i + 1 < n; ++i) {
    if (history[i] != last) continue;
    const TokenId next = history[i + 1];
    if (is_breaker(config, next)) continue;
    size_t length = 1;
    while (length <= i && history[i - length] == history[n - 1 - length] &&
           !is_breaker(config, history[i - length])) {
      ++length;
    }
    scratch.raise(next, static_cast<int32_t>(length));
  }
  // base^e stays below 1e30 for e <= log(1e30) / log(base).
  const float max_exponent = std::log(1e30f) / std::log(config.base);
  for (TokenId t : scratch.touched()) {
    const int32_t length = scratch.value(t);
    if (length < config.allowed_length) continue;
    const float exponent = std::min(static_cast<float>(length - config.allowed_length), max_exponent);
    logits[static_cast<size_t>(t)] -= config.multiplier * std::pow(config.base, exponent);
  }
}

}  // namespace met
