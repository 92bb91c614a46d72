// How many drafts each sequence verifies in a step (adaptive speculation):
// a draft is worth the output tokens it is expected to add and costs the
// time of one more row, so drafts are taken best first, and the step keeps
// the prefix of them that makes the most tokens a second.
//  - StepCostModel: a step's measured device time as a + b * rows, fitted
//    by least squares to the typical (median) recent step of each size. b is what a verify
//    row costs; a + b * rows what the whole step costs.
//  - AcceptanceRate: a sequence's chance that its next draft is accepted,
//    from its recent verify steps (decayed counts of accepted drafts and of
//    rejections, with two pseudo-steps of a prior: 1/2, or for a draft
//    model's drafts the rate the engine's recent verify steps of them had,
//    so a new sequence starts where its predecessors were); counts drift
//    back to the prior while the sequence is not drafted, so a sequence
//    that stopped drafting tries again later.
//  - allocate_drafts: the j-th draft of a sequence with rate r adds r^j
//    tokens on average (all drafts before it must be accepted first). With
//    D decode rows already in the step, drafts are ranked by worth / (b +
//    e), e being what the draft costs beyond its row (a draft model's time;
//    0 for prompt lookup and predictions), and the step keeps the prefix of
//    that ranking with the most tokens per unit of its time: the step's
//    measured time at each size (never less than at a smaller size) plus
//    the drafts' e. Not only up to where the next draft stops paying: a
//    step with any draft can cost much more than one without (an MTP
//    block's guesses and their vocabulary head), and drafts that pay only
//    together are then given together. When steps are
//    memory-bound (a >> b * rows, a CPU or GPU at small batch) good drafts
//    all fit; as the batch grows compute-bound the bar rises to about one
//    token per row and speculation backs off by itself. Until the model has
//    seen steps of two sizes it has no evidence: proposals stand on
//    alternate steps (up to the exploring size below; all where no step is
//    timed) and none on the others (StepCostModel::known); once
//    known, every kExploreSteps-th step lets free proposals stand (not a
//    draft model's), up to a quarter as many draft rows as the step's
//    decode rows (kRemeasureRows at small batch), so a cost judged too dear
//    (slow steps on a shared host) is measured again without making a
//    large batch's step much longer than its others (1.25x at 16 clients,
//    not 2x), and half a period later none stands, so is
//    the plain step; a plain step measured slower than the step with its
//    drafts (a stale or disturbed measurement of either, which drafts given
//    every step, or none, would never correct) makes the step measure the
//    one of the two measured longer ago: without drafts, or with them.
// Threading: pure values, no allocation beyond the caller's scratch. Tested
// by tests/spec/draft_budget_test.cc.
#pragma once

#include <climits>
#include <cstdint>
#include <span>
#include <vector>

namespace met {

// A step's time as a + b * rows.
struct CostLine {
  double a = 0, b = 0;
  double step_ns(int32_t rows) const { return a + b * rows > 1.0 ? a + b * rows : 1.0; }
};

class StepCostModel {
 public:
  // A step of `rows` rows took `ns` of device time (ignored when either is 0).
  void observe(int32_t rows, int64_t ns);

  // Whether steps of at least two sizes have each been seen kMinSteps times
  // within the last kStaleSteps steps (the slope is known). Until then
  // allocate_drafts lets every proposal stand on alternate steps and none
  // on the others, so steps of two sizes are measured whatever the batch,
  // and a model that judged drafts too dear once (a cold first step) learns
  // again what verify steps cost.
  bool known() const;
  // Whether any step has been measured (a device that reports no times
  // leaves every proposal standing, every step).
  bool measuring() const { return steps_ > 0; }
  // The step count when a step the size of `rows` (its bucket) was last
  // measured; 0 when none counts.
  int64_t last_seen(int32_t rows) const;
  static constexpr int64_t kMinSteps = 3;
  static constexpr int64_t kStaleSteps = 512;
  // b: the time one more row adds (>= 0). REQUIRES: known().
  double row_ns() const;
  // a + b * rows (> 0). REQUIRES: known().
  double step_ns(int32_t rows) const;
  // The line fitted to the sizes of at most max_rows rows only (to every
  // size when fewer than two of those are known): what rows cost at the
  // batch the budget is building, where a device's small-batch rows may
  // cost more per row than its large prefill steps say. REQUIRES: known().
  CostLine line_up_to(int32_t max_rows) const;
  // A step of `rows` rows as measured: between the two nearest sizes seen,
  // interpolated; beyond them, `line`'s slope from the nearest. Sizes above
  // `max_rows` are not used (large prefill steps, whose rows can cost a
  // fraction of a small batch's: line_up_to's reason). REQUIRES: known().
  double measured_ns(int32_t rows, const CostLine& line, int32_t max_rows = INT32_MAX) const;

 private:
  // Steps are grouped by size (one bucket per row count up to 8, then one
  // per doubling); each bucket keeps its last kRecent steps and stands for
  // their lower median (by time, with that step's rows), so a step slowed now and
  // then (a cold first step, a preempted thread on a shared host) does not
  // count. The line is fitted to the buckets, each counting once (those up
  // to a size, for line_up_to).
  static constexpr int kExactBuckets = 8;
  static constexpr int kBuckets = kExactBuckets + 9;
  static constexpr int kRecent = 5;
  struct Step {
    double rows = 0, ns = 0;
  };
  struct Bucket {
    Step recent[kRecent] = {};  // a ring
    int64_t count = 0;
    int64_t last_seen = 0;  // the step count when it was last observed
  };
  static int bucket_of(int32_t rows);
  CostLine fit_line(int32_t max_rows) const;
  // Recomputes typical_ and line_ after an observation (once per step at
  // most, however often the budget asks).
  void refresh() const;

  Bucket buckets_[kBuckets] = {};
  int64_t steps_ = 0;
  mutable bool fitted_ = false;
  // The usable buckets' lower medians, in increasing size.
  mutable Step typical_[kBuckets] = {};
  mutable int num_typical_ = 0;
  mutable CostLine line_;  // fitted to every size
};

class AcceptanceRate {
 public:
  // A verify step of `drafted` drafts accepted the first `accepted`.
  void observe(int32_t drafted, int32_t accepted);
  // A step in which the sequence had drafts to offer and none were verified.
  void idle();
  // The chance the next draft is accepted, in (0, 1): the decayed counts
  // with two pseudo-steps at `prior` (an even chance, or what the source's
  // recent sequences saw: DraftPlanner's).
  double rate(double prior = 0.5) const { return (accepted_ + 2.0 * prior) / (accepted_ + rejected_ + 2.0); }

 private:
  double accepted_ = 0, rejected_ = 0;
};

// What a draft model spends per draft beyond its verify row: the draft
// model's device time per draft it computed, the lower median of the last
// few proposals (each proposal's time over its drafts, catching up
// included), so the budget weighs a draft model's drafts at their cost.
class DraftCost {
 public:
  // A proposal computed `drafts` drafts in `ns` (ignored when either is 0).
  void observe(int32_t drafts, int64_t ns);
  // 0 until a proposal was measured (the draft model is tried first).
  double per_draft_ns() const;

 private:
  static constexpr int kRecent = 5;
  double recent_[kRecent] = {};
  int64_t count_ = 0;
};

// One sequence's offer for a step: its acceptance rate, how many drafts
// it has ready (its cap already applied) and what each costs beyond its row.
struct DraftOffer {
  double rate = 0.5;
  int32_t available = 0;
  double extra_ns = 0;  // device time each draft costs beyond its row (a draft model's: DraftCost)
};

// Once the cost is known, every this many steps free proposals stand again
// (up to a quarter as many draft rows as the step has decode rows, or
// kRemeasureRows if more; first drafts first), and half a period later
// none does. While it is unknown, proposals stand on alternate steps, up
// to as many draft rows as decode rows, or kExploreRows if more.
inline constexpr uint64_t kExploreSteps = 64;
inline constexpr int32_t kExploreRows = 16;
inline constexpr int32_t kRemeasureRows = 4;

// Scratch reused across steps (no allocation once it has held the largest step).
struct DraftBudgetScratch {
  struct Candidate {
    double worth;  // the tokens it adds on average
    double gain;   // worth per ns of its cost
    uint32_t seq;
  };
  std::vector<Candidate> candidates;
};

// Writes how many of its drafts each offer verifies into `out` (resized to
// offers.size()). `decode_rows`: the step's rows without drafts. Each
// sequence keeps a prefix of its drafts. `step`: the caller's step count;
// while the cost is unknown (and steps are measured), odd steps run without
// drafts.
void allocate_drafts(std::span<const DraftOffer> offers, const StepCostModel& cost, int32_t decode_rows,
                     uint64_t step, std::vector<int32_t>& out, DraftBudgetScratch& scratch);

}  // namespace met
