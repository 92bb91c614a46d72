// TokenTally. Tested by tests/sampling/token_tally_test.cc.
#include "sampling/token_tally.h"

namespace met {

void TokenTally::reset(size_t vocab) {
  for (TokenId t : touched_) {
    values_[static_cast<size_t>(t)] = 0;
    is_touched_[static_cast<size_t>(t)] = 0;
  }
  touched_.clear();
  if (values_.size() != vocab) {
    values_.assign(vocab, 0);
    is_touched_.assign(vocab, 0);
  }
}

void TokenTally::touch(TokenId t) {
  auto& flag = is_touched_[static_cast<size_t>(t)];
  if (flag == 0) {
    flag = 1;
    touched_.push_back(t);
  }
}

void TokenTally::add(TokenId t, int32_t delta) {
  if (!in_range(t)) return;
  touch(t);
  values_[static_cast<size_t>(t)] += delta;
}

void TokenTally::raise(TokenId t, int32_t v) {
  if (!in_range(t) || v <= 0) return;
  touch(t);
  auto& value = values_[static_cast<size_t>(t)];
  if (v > value) value = v;
}

int32_t TokenTally::value(TokenId t) const { return in_range(t) ? values_[static_cast<size_t>(t)] : 0; }

}  // namespace met
