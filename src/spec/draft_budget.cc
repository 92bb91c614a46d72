// The draft budget. Tested by tests/spec/draft_budget_test.cc.
#include "spec/draft_budget.h"

#include <algorithm>
#include <climits>

namespace met {
namespace {

// A plain step measured this much slower than the step with its drafts is
// measured again (above 1: measurements a few percent apart on a device
// whose rows cost nothing at this batch, a GPU's, are noise).
constexpr double kInconsistentPlainStep = 1.05;

// The lower median of values[0, n) by `key` (n >= 1): a slow step is noise,
// a fast one is not. An insertion sort (std::sort over a fixed array trips
// GCC 12's -Warray-bounds).
template <class T, int N, class Key>
T lower_median(const T (&values)[N], int n, Key key) {
  T sorted[N];
  for (int i = 0; i < n; ++i) {
    int j = i;
    for (; j > 0 && key(sorted[j - 1]) > key(values[i]); --j) sorted[j] = sorted[j - 1];
    sorted[j] = values[i];
  }
  return sorted[(n - 1) / 2];
}

// An exploring step: proposals stand (those with a cost beyond their row
// only if priced_too), first drafts first, up to `budget` draft rows.
void explore(std::span<const DraftOffer> offers, int32_t budget, bool priced_too, std::vector<int32_t>& out) {
  for (int32_t j = 0; budget > 0; ++j) {
    bool any = false;
    for (size_t i = 0; i < offers.size() && budget > 0; ++i) {
      if ((offers[i].extra_ns > 0 && !priced_too) || offers[i].available <= j) continue;
      ++out[i];
      --budget;
      any = true;
    }
    if (!any) return;
  }
}

}  // namespace

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

void StepCostModel::refresh() const {
  if (fitted_) return;
  num_typical_ = 0;
  for (const Bucket& k : buckets_) {
    if (k.count < kMinSteps || steps_ - k.last_seen >= kStaleSteps) continue;
    const int n = static_cast<int>(std::min<int64_t>(k.count, kRecent));
    typical_[num_typical_++] = lower_median(k.recent, n, [](const Step& x) { return x.ns; });
  }
  line_ = fit_line(INT32_MAX);
  fitted_ = true;
}

int64_t StepCostModel::last_seen(int32_t rows) const {
  const Bucket& k = buckets_[bucket_of(std::max(rows, 1))];
  return k.count == 0 ? 0 : k.last_seen;
}

bool StepCostModel::known() const {
  refresh();
  return num_typical_ >= 2;
}

CostLine StepCostModel::fit_line(int32_t max_rows) const {
  // The sizes up to max_rows, unless fewer than two are known: then all.
  int near = 0;
  for (int i = 0; i < num_typical_; ++i) near += typical_[i].rows <= max_rows ? 1 : 0;
  const bool all = near < 2;
  double w = 0, sr = 0, srr = 0, st = 0, srt = 0;
  for (int i = 0; i < num_typical_; ++i) {
    const Step& m = typical_[i];
    if (!all && m.rows > max_rows) continue;
    w += 1;
    sr += m.rows;
    srr += m.rows * m.rows;
    st += m.ns;
    srt += m.rows * m.ns;
  }
  CostLine line;
  if (w == 0) return line;
  const double spread = w * srr - sr * sr;
  line.b = spread > 1e-9 ? std::max((w * srt - sr * st) / spread, 0.0) : 0.0;
  line.a = std::max((st - line.b * sr) / w, 0.0);
  return line;
}

CostLine StepCostModel::line_up_to(int32_t max_rows) const {
  refresh();
  return fit_line(max_rows);
}

double StepCostModel::measured_ns(int32_t rows, const CostLine& line, int32_t max_rows) const {
  refresh();
  // The measured sizes around `rows` (typical_ is in increasing size).
  int usable = 0;
  while (usable < num_typical_ && typical_[usable].rows <= max_rows) ++usable;
  for (int i = 0; i < usable; ++i) {
    const Step& above = typical_[i];
    if (above.rows <= rows) continue;
    if (i == 0) return std::max(above.ns - line.b * (above.rows - rows), 1.0);  // below every size
    const Step& below = typical_[i - 1];
    return below.ns + (above.ns - below.ns) * (rows - below.rows) / (above.rows - below.rows);
  }
  if (usable == 0) return line.step_ns(rows);
  const Step& last = typical_[usable - 1];
  return last.ns + line.b * (rows - last.rows);  // above every size
}

double StepCostModel::row_ns() const {
  refresh();
  return line_.b;
}

double StepCostModel::step_ns(int32_t rows) const {
  refresh();
  return line_.step_ns(rows);
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

namespace {

// The steps that do not weigh drafts: writes `out` and returns true for
// them. Unknown cost: alternate, proposals standing up to explore()'s size
// (all of them where no step is timed). Known: every kExploreSteps-th step
// lets proposals stand (explore()), so the sizes the budget stopped running
// are measured again (a cost judged too dear by a run of slow steps is not
// kept), and half a period later none does, so the plain step is measured
// again. Exploring once the cost is known, drafts that cost more than their
// row (a draft model's, whose first drafts after a pause catch up every
// token since) sit out; while it is unknown they are tried.
bool unweighed_step(std::span<const DraftOffer> offers, const StepCostModel& cost, int32_t decode_rows,
                    uint64_t step, std::vector<int32_t>& out) {
  if (!cost.known()) {
    if (!cost.measuring()) {
      for (size_t i = 0; i < offers.size(); ++i) out[i] = std::max(offers[i].available, 0);
    } else if (step % 2 == 0) {
      explore(offers, std::max(decode_rows, kExploreRows), /*priced_too=*/true, out);
    }
    return true;
  }
  if (step % kExploreSteps == kExploreSteps - 1) {
    explore(offers, std::max((decode_rows + 3) / 4, kRemeasureRows), /*priced_too=*/false, out);
    return true;
  }
  return step % kExploreSteps == kExploreSteps / 2 - 1;
}

// scratch.candidates: every draft, best first (tokens per ns of its row
// and its extra cost at the slope `row_ns`).
void rank_drafts(std::span<const DraftOffer> offers, double row_ns, DraftBudgetScratch& scratch) {
  auto& cand = scratch.candidates;
  cand.clear();
  for (size_t i = 0; i < offers.size(); ++i) {
    const double per_draft = std::max(row_ns + offers[i].extra_ns, 1.0);
    double worth = 1.0;
    for (int32_t j = 0; j < offers[i].available; ++j) {
      worth *= offers[i].rate;
      cand.push_back({worth, worth / per_draft, static_cast<uint32_t>(i)});
    }
  }
  // std::sort: stable_sort may allocate a buffer each step. A sequence's own
  // drafts are in strictly decreasing worth (rate < 1) at the same cost, so
  // any prefix gives each sequence a prefix of its own; ties go to the
  // earlier.
  std::sort(cand.begin(), cand.end(),
            [](const auto& x, const auto& y) { return x.gain > y.gain || (x.gain == y.gain && x.seq < y.seq); });
}

// How many of the ranked drafts the step keeps: the prefix that makes the
// most tokens a second, at the step's measured time at each size (never
// less than at a smaller size: a measured size above the next, on a shared
// host, is noise) plus the drafts' extra cost. Not only up to where the
// next draft stops paying: a step with any draft can cost much more than
// one without (an MTP block's guesses and their head), so three drafts at
// an even chance may pay together where the first alone does not.
size_t best_prefix(std::span<const DraftOffer> offers, const StepCostModel& cost, const CostLine& line,
                   int32_t plain, int32_t most_rows, const DraftBudgetScratch& scratch) {
  double tokens = plain, extra = 0, step_ns = cost.measured_ns(plain, line, most_rows);
  double best_rate = tokens / step_ns;
  size_t best = 0;
  for (size_t k = 0; k < scratch.candidates.size(); ++k) {
    const auto& c = scratch.candidates[k];
    tokens += c.worth;
    extra += offers[c.seq].extra_ns;
    step_ns = std::max(step_ns, cost.measured_ns(plain + static_cast<int32_t>(k) + 1, line, most_rows));
    const double rate = tokens / (step_ns + extra);
    if (rate > best_rate) {
      best_rate = rate;
      best = k + 1;
    }
  }
  return best;
}

}  // namespace

void allocate_drafts(std::span<const DraftOffer> offers, const StepCostModel& cost, int32_t decode_rows,
                     uint64_t step, std::vector<int32_t>& out, DraftBudgetScratch& scratch) {
  out.assign(offers.size(), 0);
  if (unweighed_step(offers, cost, decode_rows, step, out)) return;
  // The line of the steps this one can become: a device whose rows cost
  // more at small batch than in its large prefill steps is priced as it is
  // at this batch.
  const int32_t plain = std::max(decode_rows, 1);
  int32_t most_rows = plain;
  for (const DraftOffer& o : offers) most_rows += std::max(o.available, 0);
  const CostLine line = cost.line_up_to(most_rows);
  rank_drafts(offers, line.b, scratch);
  const size_t best = best_prefix(offers, cost, line, plain, most_rows, scratch);
  for (size_t k = 0; k < best; ++k) ++out[scratch.candidates[k].seq];
  const int32_t rows = plain + static_cast<int32_t>(best);
  // The step without drafts measured slower than the step with them is not
  // what one device does: a stale or disturbed measurement of one of them
  // (a few slow plain steps on a shared host; a few lucky early verify
  // steps) that, with drafts given every step or none, would never be
  // measured again. This step measures the one measured longer ago: without
  // drafts, or with the drafts as given.
  if (rows > plain &&
      cost.measured_ns(plain, line, most_rows) > kInconsistentPlainStep * cost.measured_ns(rows, line, most_rows) &&
      cost.last_seen(plain) <= cost.last_seen(rows)) {
    out.assign(offers.size(), 0);
  }
}

void DraftCost::observe(int32_t drafts, int64_t ns) {
  if (drafts <= 0 || ns <= 0) return;
  recent_[count_ % kRecent] = static_cast<double>(ns) / drafts;
  ++count_;
}

double DraftCost::per_draft_ns() const {
  const int n = static_cast<int>(std::min<int64_t>(count_, kRecent));
  return n == 0 ? 0 : lower_median(recent_, n, [](double x) { return x; });
}

}  // namespace met
