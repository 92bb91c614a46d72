// propose_prompt_lookup. Tested by tests/spec/prompt_lookup_test.cc.
#include "spec/prompt_lookup.h"

#include <algorithm>
#include <cstddef>

#include "core/check.h"

namespace met {
namespace {

// The history as one span.
struct WholeHistory {
  std::span<const TokenId> tokens;
  size_t size() const { return tokens.size(); }
  TokenId operator[](size_t i) const { return tokens[i]; }
};

// The history as the prompt followed by the output.
struct PromptThenOutput {
  std::span<const TokenId> prompt;
  std::span<const TokenId> output;
  size_t size() const { return prompt.size() + output.size(); }
  TokenId operator[](size_t i) const { return i < prompt.size() ? prompt[i] : output[i - prompt.size()]; }
};

// An earlier occurrence of the history's last `length` tokens: history[end - length, end).
struct SuffixOccurrence {
  size_t end = 0;
  int32_t length = 0;
};

// The longest earlier occurrence of the history's suffix (its length capped at
// max_n) that ends before the last token; the earliest of equal length.
template <typename History>
SuffixOccurrence longest_earliest_occurrence(const History& history, int32_t max_n) {
  SuffixOccurrence best;
  const size_t size = history.size();
  if (size < 2) return best;
  const TokenId last = history[size - 1];
  for (size_t end = 1; end < size; ++end) {
    if (history[end - 1] != last) continue;
    const auto limit = static_cast<int32_t>(std::min(static_cast<size_t>(max_n), end));
    int32_t length = 1;
    while (length < limit && history[end - 1 - static_cast<size_t>(length)] ==
                                 history[size - 1 - static_cast<size_t>(length)]) {
      ++length;
    }
    if (length > best.length) {
      best = {end, length};
      if (length == max_n) break;  // nothing longer counts, and later ones are not earlier
    }
  }
  return best;
}

template <typename History>
int32_t propose_from(const History& history, const PromptLookupOptions& options, std::vector<TokenId>& drafts) {
  MET_DCHECK(options.min_n >= 1 && options.min_n <= options.max_n && options.max_draft >= 0,
             "prompt lookup options min_n={} max_n={} max_draft={}", options.min_n, options.max_n,
             options.max_draft);
  drafts.clear();
  const SuffixOccurrence match = longest_earliest_occurrence(history, options.max_n);
  if (match.length < options.min_n) return 0;
  const size_t stop = std::min(history.size(), match.end + static_cast<size_t>(options.max_draft));
  for (size_t i = match.end; i < stop; ++i) drafts.push_back(history[i]);
  return match.length;
}

}  // namespace

int32_t propose_prompt_lookup(std::span<const TokenId> history, const PromptLookupOptions& options,
                              std::vector<TokenId>& drafts) {
  return propose_from(WholeHistory{history}, options, drafts);
}

int32_t propose_prompt_lookup(std::span<const TokenId> prompt, std::span<const TokenId> output,
                              const PromptLookupOptions& options, std::vector<TokenId>& drafts) {
  return propose_from(PromptThenOutput{prompt, output}, options, drafts);
}

}  // namespace met
