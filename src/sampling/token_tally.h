// TokenTally: a per-token integer (a count, a longest match) over a
// vocabulary, sparse to clear: only the touched tokens are reset, so a
// tally reused across calls costs work proportional to the history, not the
// vocabulary, after its first growth.
// Invariants: value(t) is 0 for every token not in touched(); touched() has
// no duplicates. Ids outside [0, vocab) are ignored.
// Threading: one owner at a time. Tested by tests/sampling/token_tally_test.cc.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/ids.h"

namespace met {

class TokenTally {
 public:
  // Clears the tally and sizes it for ids in [0, vocab).
  void reset(size_t vocab);

  void add(TokenId t, int32_t delta = 1);
  // value(t) = max(value(t), v) for v > 0.
  void raise(TokenId t, int32_t v);

  int32_t value(TokenId t) const;
  std::span<const TokenId> touched() const { return touched_; }

 private:
  bool in_range(TokenId t) const { return t >= 0 && static_cast<size_t>(t) < values_.size(); }
  void touch(TokenId t);

  std::vector<int32_t> values_;
  std::vector<uint8_t> is_touched_;
  std::vector<TokenId> touched_;
};

}  // namespace met
