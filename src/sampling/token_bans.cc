// Token bans. Tested by tests/sampling/token_bans_test.cc.
#include "sampling/token_bans.h"

#include <algorithm>
#include <limits>

namespace met {
namespace {

constexpr float kBanned = -std::numeric_limits<float>::infinity();

bool in_row(TokenId t, std::span<float> logits) { return t >= 0 && static_cast<size_t>(t) < logits.size(); }

}  // namespace

void apply_logit_bias(std::span<const LogitBias> biases, std::span<float> logits) {
  for (const LogitBias& b : biases) {
    if (!in_row(b.token, logits)) continue;
    float& logit = logits[static_cast<size_t>(b.token)];
    logit = b.bias <= -100.0f ? kBanned : logit + b.bias;
  }
}

void apply_allowed_tokens(std::span<const TokenId> allowed, std::span<float> logits, std::vector<float>& saved) {
  saved.clear();
  for (TokenId t : allowed) saved.push_back(in_row(t, logits) ? logits[static_cast<size_t>(t)] : kBanned);
  std::fill(logits.begin(), logits.end(), kBanned);
  for (size_t i = 0; i < allowed.size(); ++i) {
    if (in_row(allowed[i], logits)) logits[static_cast<size_t>(allowed[i])] = saved[i];
  }
}

void apply_bad_words(const std::vector<std::vector<TokenId>>& bad_words, std::span<const TokenId> output,
                     std::span<float> logits) {
  for (const auto& word : bad_words) {
    const size_t prefix = word.size() - 1;
    if (word.empty() || !in_row(word.back(), logits) || prefix > output.size()) continue;
    if (std::equal(word.begin(), word.end() - 1, output.end() - static_cast<std::ptrdiff_t>(prefix))) {
      logits[static_cast<size_t>(word.back())] = kBanned;
    }
  }
}

}  // namespace met
