// PredictionMatcher. Tested by tests/spec/prediction_test.cc.
#include "spec/prediction.h"

#include <algorithm>
#include <bit>
#include <utility>

#include "core/check.h"

namespace met {

PredictionMatcher::PredictionMatcher(std::vector<TokenId> prediction, PredictionOptions options)
    : prediction_(std::move(prediction)), options_(options) {
  MET_CHECK(options_.confirm_n >= 1, "confirm_n {} must be >= 1", options_.confirm_n);
  recent_.reserve(kMaxEvidence);
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
      ++run_;
      ++since_anchor_;
      ++usage_.accepted_prediction_tokens;
      return;
    }
    leave();
  }
  ++since_anchor_;
  resync();
}

void PredictionMatcher::remember(TokenId token) {
  if (recent_.size() == kMaxEvidence) recent_.erase(recent_.begin());
  recent_.push_back(token);
}

// The output leaves the prediction at next_: the place becomes the anchor
// if the output had followed it for confirm_n tokens, else the pick was wrong
// and the anchor stays where it was.
void PredictionMatcher::leave() {
  if (run_ >= static_cast<size_t>(options_.confirm_n)) {
    anchor_ = *next_;
    since_anchor_ = 0;
    try_substitution_ = true;
  }
  next_.reset();
  run_ = 0;
}

// How many of the output's last tokens, at most `limit`, are the
// prediction's tokens just before `next`. REQUIRES: limit <= next,
// limit <= recent_.size().
size_t PredictionMatcher::evidence_at(size_t next, size_t limit) const {
  size_t m = 0;
  while (m < limit && prediction_[next - 1 - m] == recent_[recent_.size() - 1 - m]) ++m;
  return m;
}

size_t PredictionMatcher::need_at(size_t distance) {
  return std::min(kMaxEvidence, 1 + static_cast<size_t>(std::bit_width(distance)));
}

// Picks the prediction up at the place nearest to where a same-length edit
// would put the output (`aligned`) that the output's last tokens since the
// anchor lead to, with as many of them as need_at() asks there; the more of
// them, the better, at the same distance. With none, the first token after
// a run in step tries a substitution.
void PredictionMatcher::resync() {
  MET_DCHECK(since_anchor_ >= 1, "resync after a committed token");
  const size_t limit = std::min(since_anchor_, kMaxEvidence);
  const size_t aligned = anchor_ + since_anchor_;
  // A place can be picked only where need_at(distance) <= limit: below
  // kMaxEvidence, within 2^(limit - 1) - 1 of `aligned`, so a token soon
  // after an edit searches a few places, not the whole prediction.
  const size_t reach = limit < kMaxEvidence ? (size_t{1} << (limit - 1)) - 1 : prediction_.size();
  const size_t first = std::max(anchor_ + 1, aligned > reach ? aligned - reach : 0);
  const size_t last = std::min(prediction_.size(), aligned + std::min(reach, prediction_.size()));
  std::optional<size_t> best;
  size_t best_distance = 0;
  size_t best_m = 0;
  for (size_t next = first; next <= last; ++next) {
    const size_t distance = next > aligned ? next - aligned : aligned - next;
    if (best && distance > best_distance) {
      if (next > aligned) break;  // only further from here on
      continue;
    }
    const size_t m = evidence_at(next, std::min(limit, next - anchor_));
    if (m == 0 || m < need_at(distance)) continue;
    if (!best || distance < best_distance || m > best_m) {
      best = next;
      best_distance = distance;
      best_m = m;
    }
  }
  if (!best && try_substitution_ && since_anchor_ == 1 && aligned <= prediction_.size()) best = aligned;
  try_substitution_ = false;
  next_ = best;
}

}  // namespace met
