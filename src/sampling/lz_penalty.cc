// The LZ penalty. Tested by tests/sampling/lz_penalty_test.cc.
#include "sampling/lz_penalty.h"

#include <algorithm>
#include <cmath>

namespace met {

void apply_lz_penalty(const LzConfig& config, std::span<const TokenId> window, TokenTally& scratch,
                      std::span<float> logits) {
  scratch.reset(logits.size());
  const size_t w = window.size();
  const auto b = static_cast<size_t>(config.buffer);
  if (w <= b || logits.empty()) return;
  // Best match per token, encoded so that max() prefers the longer match,
  // then the nearer position: key = length * (w + 1) + p.
  for (size_t p = b; p < w; ++p) {
    size_t suffix = 0;
    while (suffix < b && window[p - 1 - suffix] == window[w - 1 - suffix]) ++suffix;
    const size_t key = (suffix + 1) * (w + 1) + p;
    scratch.raise(window[p], static_cast<int32_t>(key));
  }
  const float log2_vocab = std::log2(static_cast<float>(logits.size()));
  for (TokenId t : scratch.touched()) {
    const auto p = static_cast<size_t>(scratch.value(t)) % (w + 1);
    const float codelength = std::clamp(std::log2(static_cast<float>(w - p)), 0.0f, log2_vocab);
    logits[static_cast<size_t>(t)] -= config.alpha * (log2_vocab - codelength);
  }
}

}  // namespace met
