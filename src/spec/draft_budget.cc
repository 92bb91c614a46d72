// The draft budget. Tested by tests/spec/draft_budget_test.cc.
#include "spec/draft_budget.h"

#include <algorithm>

namespace met {

int StepCostModel::bucket_of(int32_t rows) {
  if (rows <= kExactBuckets) return rows - 1;
  int b = kExactBuckets;
  for (int64_t top = 2 * kExactBuckets; rows > top && b + 1 < kBuckets; top *= 2) ++b;
  return b;
}

void StepCostModel::observe(int32_t rows, int64_t ns) {
  if (rows <= 0 || ns <= 0) return;
  Bucket& k = buckets_[bucket_of(rows)];
  ++steps_;
  if (steps_ - k.last_seen >= kStaleSteps) k.count = 0;
  k.recent[k.count % kRecent] = Step{static_cast<double>(rows), static_cast<double>(ns)};
  ++k.count;
  k.last_seen = steps_;
  fitted_ = false;
}

StepCostModel::Step StepCostModel::median(const Bucket& k) {
  // An insertion sort of at most kRecent steps by time (std::sort over the
  // fixed array trips GCC 12's -Warray-bounds).
  const int n = static_cast<int>(std::min<int64_t>(k.count, kRecent));
  Step sorted[kRecent];
  for (int i = 0; i < n; ++i) {
    int j = i;
    for (; j > 0 && sorted[j - 1].ns > k.recent[i].ns; --j) sorted[j] = sorted[j - 1];
    sorted[j] = k.recent[i];
  }
  return sorted[(n - 1) / 2];  // the lower median: a slow step is noise, a fast one is not
}

bool StepCostModel::known() const {
  int usable_buckets = 0;
  for (const Bucket& k : buckets_) usable_buckets += usable(k) ? 1 : 0;
  return usable_buckets >= 2;
}

void StepCostModel::fit() const {
  if (fitted_) return;
  double w = 0, sr = 0, srr = 0, st = 0, srt = 0;
  for (int i = 0; i < kBuckets; ++i) {
    if (!usable(buckets_[i])) continue;
    const Step m = median(buckets_[i]);
    w += 1;
    sr += m.rows;
    srr += m.rows * m.rows;
    st += m.ns;
    srt += m.rows * m.ns;
  }
  const double spread = w * srr - sr * sr;
  b_ = spread > 1e-9 ? std::max((w * srt - sr * st) / spread, 0.0) : 0.0;
  a_ = std::max((st - b_ * sr) / w, 0.0);
  fitted_ = true;
}

double StepCostModel::row_ns() const {
  fit();
  return b_;
}

double StepCostModel::step_ns(int32_t rows) const {
  fit();
  return std::max(a_ + b_ * rows, 1.0);
}

void AcceptanceRate::observe(int32_t drafted, int32_t accepted) {
  constexpr double kKeep = 0.9;  // about the last ten verify steps count
  accepted_ = accepted_ * kKeep + accepted;
  rejected_ = rejected_ * kKeep + (accepted < drafted ? 1 : 0);
}

void AcceptanceRate::idle() {
  constexpr double kForget = 0.95;
  accepted_ *= kForget;
  rejected_ *= kForget;
}

void allocate_drafts(std::span<const DraftOffer> offers, const StepCostModel& cost, int32_t decode_rows,
                     uint64_t step, std::vector<int32_t>& out, DraftBudgetScratch& scratch) {
  out.assign(offers.size(), 0);
  // Unknown cost: alternate. Known: every kExploreSteps-th step lets every
  // proposal stand, so the sizes the budget stopped running are measured
  // again (a cost judged too dear by a run of slow steps is not kept).
  if (!cost.known() || step % kExploreSteps == kExploreSteps - 1) {
    if (cost.measuring() && !cost.known() && step % 2 == 1) return;
    for (size_t i = 0; i < offers.size(); ++i) out[i] = std::max(offers[i].available, 0);
    return;
  }
  const double row = cost.row_ns();
  auto& cand = scratch.candidates;
  cand.clear();
  for (size_t i = 0; i < offers.size(); ++i) {
    // Tokens per ns of each draft: its worth over its row and its extra cost.
    const double per_draft = std::max(row + offers[i].extra_ns, 1.0);
    double worth = 1.0;
    for (int32_t j = 0; j < offers[i].available; ++j) {
      worth *= offers[i].rate;
      cand.push_back({worth, worth / per_draft, static_cast<uint32_t>(i)});
    }
  }
  // Best first (std::sort: stable_sort may allocate a buffer each step). A
  // sequence's own drafts are in strictly decreasing worth (rate < 1) at the
  // same cost, so each sequence gets a prefix; ties go to the earlier.
  std::sort(cand.begin(), cand.end(),
            [](const auto& x, const auto& y) { return x.gain > y.gain || (x.gain == y.gain && x.seq < y.seq); });
  double tokens = std::max(decode_rows, 1);
  int32_t rows = std::max(decode_rows, 1);
  double extra = 0;  // the drafts' time beyond their rows, so far
  for (const auto& c : cand) {
    // Worth it while the draft's tokens per ns beat the step's so far.
    const double time = cost.step_ns(rows) + extra;
    if (c.gain * time <= tokens) break;
    ++out[c.seq];
    tokens += c.worth;
    extra += offers[c.seq].extra_ns;
    ++rows;
  }
}

void DraftCost::observe(int32_t drafts, int64_t ns) {
  if (drafts <= 0 || ns <= 0) return;
  recent_[count_ % kRecent] = static_cast<double>(ns) / drafts;
  ++count_;
}

double DraftCost::per_draft_ns() const {
  const int n = static_cast<int>(std::min<int64_t>(count_, kRecent));
  if (n == 0) return 0;
  double sorted[kRecent];
  for (int i = 0; i < n; ++i) {
    int j = i;
    for (; j > 0 && sorted[j - 1] > recent_[i]; --j) sorted[j] = sorted[j - 1];
    sorted[j] = recent_[i];
  }
  return sorted[(n - 1) / 2];
}

}  // namespace met
