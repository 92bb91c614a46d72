// DecodeLane: the pipelined decode lane (reference 001). While step t is in
// flight and every row may go ahead, step t+1 is launched fed from t's
// device-side argmax (FeedFromRow), then t is settled: awaited, its over-runs
// rolled back, its tokens committed, and t+1 validated against the state that
// commit produced. The scheduler calls it for decode-only ticks; a tick that
// needs the device quiet (arrivals, retirements, preemption, shutdown) drains
// it first.
// Invariants: rows_match holds for every step settled or validated; tokens of
// a discarded row never reach a sink; every block reserved for an over-run is
// rolled back before anything else runs; a step launched ahead of a failed
// one is awaited and dropped; with the lane on or off, greedy output is the
// same token for token (DESIGN.md invariant 6); a state snapshot a step
// launched ahead takes is keyed when its row is validated and given back
// when the row or the step is dropped.
// Threading: engine thread only. Tested by tests/scheduler/decode_lane_test.cc.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "kv/kv_manager.h"
#include "scheduler/commit_token.h"
#include "scheduler/dev_port.h"
#include "scheduler/io.h"
#include "scheduler/pipeline.h"
#include "scheduler/plan_builder.h"
#include "spec/draft_budget.h"

namespace met {

// The message every row gets when a RepickOnly model ran a continuing row
// from an input the host did not commit.
inline constexpr const char* kPoisonedAheadMessage =
    "a decode step launched ahead was fed an input the host did not commit; "
    "the model's recurrent state cannot be rewound";

enum class LaneStep {
  kRan,          // a step was settled (and maybe one launched ahead)
  kNeedsLaunch,  // nothing is in flight (or the step was discarded): the
                 // scheduler decides the next batch, then calls launch_fresh
};

class DecodeLane {
 public:
  // `kv_window`: blocks behind it are given back as rows commit (0: none).
  DecodeLane(SchedIo io, size_t max_seq_len, int32_t kv_window)
      : io_(io), max_seq_len_(max_seq_len), kv_window_(kv_window) {}

  bool has_inflight() const { return pipe_.has_inflight(); }
  // Whether the step in flight computes the MTP block's guesses.
  bool inflight_guesses() const { return pipe_.inflight.has_value() && pipe_.inflight->guesses; }
  // Each settled step's rows and device time go to `cost` (the draft budget's model).
  void observe_costs(StepCostModel* cost) { cost_ = cost; }
  // Whether the steps launched ahead from now on compute the MTP block's
  // guesses (StepPlan::mtp_guesses).
  void set_mtp_guesses(bool guesses) { mtp_guesses_ = guesses; }
  const Pipeline& pipeline() const { return pipe_; }

  // step_decode_pipelined, with a step in flight: launch the next one ahead
  // of it when every row may, then settle it. kNeedsLaunch when nothing is in
  // flight any more without a step having run (the step was discarded).
  LaneStep step_decode_pipelined(std::vector<ActiveSeq>& active);

  // step_decode_pipelined, with none in flight: launches `plan` (decode-only,
  // host-fed, one output per active row in slot order, built after the
  // scheduler's decisions) and keeps it in flight, so the next tick launches
  // the step after it before settling it. A refused launch fails the rows.
  // REQUIRES: nothing in flight; ahead_allowed(active).
  void launch_fresh(const StepPlan& plan, std::vector<ActiveSeq>& active);

  Settled settle(std::vector<ActiveSeq>& active);

  // Settles everything in flight.
  void drain(std::vector<ActiveSeq>& active);

  // Awaits whatever is in flight and drops it (shutdown, fault).
  void abandon();

  // Decides which rows of `next` are over-runs against the state the commit
  // of the step before it produced (`prev_tokens`: that step's argmax); the
  // second value is true when a RepickOnly row continues from an input the
  // host did not commit.
  std::pair<Inflight, bool> validate_next(Inflight next, std::vector<ActiveSeq>& active,
                                          std::span<const TokenId> prev_tokens);

 private:
  void hold(Ticket ticket, TimePoint t0, const StepPlan& plan, const std::vector<ActiveSeq>& active);
  bool reserve_all(std::vector<ActiveSeq>& active);
  bool launch_ahead(std::vector<ActiveSeq>& active);
  void fail_rows(std::vector<ActiveSeq>& active, std::string_view msg);
  // The snapshots `inf` took ahead of its inputs are given back.
  void cancel_snapshots(Inflight& inf);
  // Awaits the step launched ahead, if any, and drops it.
  void drop_next();
  // An Inflight with empty vectors whose storage is reused (no allocation per step).
  Inflight take_spare();
  void recycle(Inflight&& inf);

  SchedIo io_;
  size_t max_seq_len_;
  int32_t kv_window_;
  Pipeline pipe_;
  PlanBuilder builder_;
  Inflight spare_;
  StepResult result_;
  PickScratch pick_scratch_;
  StepResult dropped_;
  std::vector<const ActiveSeq*> survivors_;
  StepCostModel* cost_ = nullptr;
  bool mtp_guesses_ = true;
};

}  // namespace met
