// PredictionMatcher. Tested by tests/spec/prediction_test.cc.
#include "spec/prediction.h"

#include <algorithm>
#include <utility>

#include "core/check.h"

namespace met {

PredictionMatcher::PredictionMatcher(std::vector<TokenId> prediction, PredictionOptions options)
    : prediction_(std::move(prediction)), options_(options) {
  MET_CHECK(options_.resync_n >= 1, "resync_n {} must be >= 1", options_.resync_n);
  recent_.reserve(static_cast<size_t>(options_.resync_n));
}

void PredictionMatcher::propose(int32_t max_draft, std::vector<TokenId>& drafts) const {
  MET_DCHECK(max_draft >= 0);
  drafts.clear();
  if (!next_) return;
  const size_t stop = std::min(prediction_.size(), *next_ + static_cast<size_t>(max_draft));
  drafts.insert(drafts.end(), prediction_.begin() + static_cast<std::ptrdiff_t>(*next_),
                prediction_.begin() + static_cast<std::ptrdiff_t>(stop));
}

void PredictionMatcher::on_verified(int32_t num_drafted, std::span<const TokenId> committed) {
  const auto drafted = static_cast<size_t>(num_drafted);
  MET_DCHECK(num_drafted >= 0);
  MET_CHECK(drafted == 0 || (next_ && *next_ + drafted <= prediction_.size()),
            "{} drafts verified that the matcher did not propose", num_drafted);
  MET_DCHECK(committed.size() <= drafted + 1, "{} tokens committed after {} drafts", committed.size(), drafted);
  size_t kept = 0;
  while (kept < drafted && kept < committed.size() && committed[kept] == prediction_[*next_ + kept]) ++kept;
  usage_.rejected_prediction_tokens += static_cast<int64_t>(drafted - kept);
  for (const TokenId token : committed) advance(token);
}

void PredictionMatcher::on_committed(std::span<const TokenId> committed) {
  for (const TokenId token : committed) advance(token);
}

void PredictionMatcher::advance(TokenId token) {
  remember(token);
  if (next_) {
    if (*next_ < prediction_.size() && prediction_[*next_] == token) {
      ++*next_;
      ++usage_.accepted_prediction_tokens;
      return;
    }
    resync_from_ = *next_;
    next_.reset();
  }
  resync();
}

void PredictionMatcher::remember(TokenId token) {
  if (recent_.size() == static_cast<size_t>(options_.resync_n)) recent_.erase(recent_.begin());
  recent_.push_back(token);
}

// Picks the prediction up at the first occurrence of the output's last
// resync_n tokens at or after resync_from_.
void PredictionMatcher::resync() {
  const size_t n = recent_.size();
  if (n < static_cast<size_t>(options_.resync_n) || prediction_.size() < n) return;
  for (size_t start = resync_from_; start + n <= prediction_.size(); ++start) {
    if (std::equal(recent_.begin(), recent_.end(), prediction_.begin() + static_cast<std::ptrdiff_t>(start))) {
      next_ = start + n;
      return;
    }
  }
}

}  // namespace met
