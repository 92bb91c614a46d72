// The pipelined decode lane's state (reference 001): the step in flight and
// the one launched ahead of it, and the pure predicates the lane decides by.
// A step launched ahead feeds every row from the step before it on the device
// (FeedFromRow), so the host samples, checks guards and streams step t while
// the device computes step t+1.
// Invariants: rows of an Inflight are the active rows in slot order at launch
// (rows_match); a launched-ahead step is validated against the state the
// commit of the step before it produced; tokens of a discarded row never reach
// a sink.
// Threading: engine thread only. Tested by tests/scheduler/decode_lane_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "backend/step_plan.h"
#include "core/clock.h"
#include "core/ids.h"
#include "scheduler/active_seq.h"

namespace met {

// What the device must apply to a row's pick (today: EOS and stop ids banned
// under min_tokens; grammar and thinking masks join it later).
struct RowMask {
  bool suppress_stops = false;
  friend bool operator==(const RowMask&, const RowMask&) = default;
};

RowMask row_mask(const ActiveSeq& a);

struct LaneRow {
  int32_t slot = 0;      // the row's slot at launch
  int32_t position = 0;  // the position its input was fed at
};

// A state snapshot a step launched ahead takes after a row whose input the
// host has not committed yet (KvManager::decode_snapshot_ahead): fulfilled
// or cancelled when the step is validated or dropped.
struct PendingSnapshot {
  int32_t row = 0;
  StateSlotId slot;
  int32_t num_tokens = 0;  // the prefix it holds the state after
};

struct Inflight {
  Ticket ticket;
  TimePoint t0{};
  std::vector<LaneRow> rows;
  std::vector<RowMask> masks;
  // Set for a step launched ahead: each row's input (fed from a row of the
  // step before, or given by the host).
  std::optional<std::vector<RowInput>> inputs;
  std::vector<bool> discard;  // rows found to be over-runs
  bool discard_all = false;   // the whole step is redone
  bool host_logits = false;   // the host samples from logits instead of the argmax
  bool has_logits = false;    // the step's outputs carry logits
  bool guesses = false;       // the step computes the MTP block's guesses (StepPlan::mtp_guesses)
  std::vector<PendingSnapshot> snapshots;  // a step launched ahead: not yet keyed
};

struct Pipeline {
  std::optional<Inflight> inflight;  // the oldest step not yet settled
  std::optional<Inflight> next;      // launched ahead of it
  bool has_inflight() const { return inflight.has_value(); }
};

enum class Settled {
  kDone,    // committed; a step launched ahead (if any) is in flight now
  kFailed,  // the rows were answered with errors
  kIdle,    // nothing was in flight
  kRedo,    // the step was discarded: launch afresh
};

// The rows of `inf` are the active rows, in the same slots.
bool rows_match(const Inflight& inf, std::span<const ActiveSeq> active);

// Every row can take the device's argmax (no host sampling).
bool argmax_readback_eligible(std::span<const ActiveSeq* const> rows);

// Whether a step may be launched ahead of this batch: every row decodes (no
// prefill pending), has not finished, and takes the device's argmax.
bool ahead_allowed(std::span<const ActiveSeq> active);

}  // namespace met
