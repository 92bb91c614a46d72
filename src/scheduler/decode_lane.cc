// DecodeLane. Tested by tests/scheduler/decode_lane_test.cc.
#include "scheduler/decode_lane.h"

#include <fmt/format.h>

#include "core/check.h"
#include "core/fault_flag.h"
#include "core/log.h"
#include "scheduler/lifecycle.h"
#include "scheduler/commit_token.h"
#include "scheduler/speculation.h"

namespace met {

Inflight DecodeLane::take_spare() {
  Inflight inf = std::move(spare_);
  inf.rows.clear();
  inf.masks.clear();
  if (inf.inputs.has_value()) inf.inputs->clear();
  inf.discard.clear();
  inf.discard_all = false;
  inf.host_logits = false;
  inf.has_logits = false;
  inf.guesses = false;
  inf.snapshots.clear();
  return inf;
}

void DecodeLane::cancel_snapshots(Inflight& inf) {
  for (const PendingSnapshot& p : inf.snapshots) io_.kv.cancel_snapshot(p.slot);
  inf.snapshots.clear();
}

void DecodeLane::drop_next() {
  if (!pipe_.next.has_value()) return;
  (void)io_.dev.await_result(pipe_.next->ticket, dropped_);
  cancel_snapshots(*pipe_.next);
  pipe_.next.reset();
}

void DecodeLane::recycle(Inflight&& inf) { spare_ = std::move(inf); }

void DecodeLane::hold(Ticket ticket, TimePoint t0, const StepPlan& plan, const std::vector<ActiveSeq>& active) {
  MET_CHECK(!pipe_.inflight.has_value(), "a step is already in flight");
  MET_CHECK(plan.outputs.size() == active.size(), "a held step has one output per row");
  Inflight inf = take_spare();
  inf.inputs.reset();  // host-fed
  inf.ticket = ticket;
  inf.t0 = t0;
  for (size_t i = 0; i < active.size(); ++i) {
    inf.rows.push_back(LaneRow{active[i].seq.slot_idx, plan.positions[i]});
    inf.masks.push_back(row_mask(active[i]));
    inf.has_logits = inf.has_logits || plan.outputs[i].kind == OutputKind::kLogits;
  }
  inf.discard.assign(active.size(), false);
  inf.guesses = plan.mtp_guesses;
  pipe_.inflight = std::move(inf);
}

bool DecodeLane::reserve_all(std::vector<ActiveSeq>& active) {
  const Inflight& inf = *pipe_.inflight;
  for (size_t i = 0; i < active.size(); ++i) {
    // t writes position p; the step ahead writes p + 1.
    if (io_.kv.reserve(active[i].seq, inf.rows[i].position + 2) != Admit::kNow) return false;
  }
  return true;
}

bool DecodeLane::launch_ahead(std::vector<ActiveSeq>& active) {
  const Inflight& inf = *pipe_.inflight;
  const DeviceInfo& info = io_.dev.info();
  const bool repick_only = info.fed_ahead_policy == FedAheadPolicy::kRepickOnly;
  StepPlan& plan = builder_.begin(info.mtp_chain_seqs);
  plan.mtp_guesses = mtp_guesses_;
  io_.kv.begin_step();
  Inflight next = take_spare();
  next.t0 = io_.clock.now();
  if (!next.inputs.has_value()) next.inputs.emplace();
  std::vector<RowInput>& inputs = *next.inputs;
  for (size_t i = 0; i < active.size(); ++i) {
    const ActiveSeq& a = active[i];
    const int32_t pos = inf.rows[i].position + 1;
    const RowInput in = FeedFromRow{static_cast<int32_t>(i)};
    plan.inputs.push_back(in);
    plan.positions.push_back(pos);
    builder_.add_seq(static_cast<int32_t>(i), 1, pos, a.seq.block_table, a.seq.state_slot, false,
                     mtp_guesses_ ? mtp_chain_for(a, 0, info.mtp_drafts) : 0, a.seq.adapter_slot);
    // A RepickOnly step always stands, so its logits come back in case the
    // host has to pick again.
    add_output_row(plan, static_cast<int32_t>(i), repick_only ? OutputKind::kLogits : OutputKind::kArgmax, a);
    inputs.push_back(in);
    next.rows.push_back(LaneRow{a.seq.slot_idx, pos});
    next.masks.push_back(row_mask(a));
    if (const std::optional<StateCopy> c = io_.kv.decode_snapshot_ahead(a.seq, pos + 1)) {
      plan.state_snapshots.push_back(*c);
      next.snapshots.push_back(PendingSnapshot{static_cast<int32_t>(i), c->to, pos + 1});
    }
  }
  Result<Ticket> t = io_.dev.launch(builder_.finish());
  if (!t.ok()) {
    MET_LOG_WARN("ahead decode launch declined, settling first: {}", t.status().message());
    cancel_snapshots(next);
    recycle(std::move(next));
    return false;
  }
  next.ticket = *t;
  next.discard.assign(active.size(), false);
  next.has_logits = repick_only;
  next.guesses = mtp_guesses_;
  pipe_.next = std::move(next);
  return true;
}

void DecodeLane::launch_fresh(const StepPlan& plan, std::vector<ActiveSeq>& active) {
  MET_DCHECK(ahead_allowed(active), "a fresh pipelined launch needs every row to allow going ahead");
  const TimePoint t0 = io_.clock.now();
  Result<Ticket> t = io_.dev.launch(plan);
  if (!t.ok()) {
    for (ActiveSeq& a : active) fail_sequence(a, fmt::format("the forward step was refused: {}", t.status().message()));
    return;
  }
  hold(*t, t0, plan, active);
}

LaneStep DecodeLane::step_decode_pipelined(std::vector<ActiveSeq>& active) {
  if (pipe_.inflight.has_value()) {
    const Inflight& inf = *pipe_.inflight;
    const bool can_go_ahead = !inf.host_logits && !inf.discard_all && rows_match(inf, active) &&
                              ahead_allowed(active) && reserve_all(active);
    if (can_go_ahead && launch_ahead(active)) {
      // t+1 is in flight; t is committed against the state it was launched
      // from, and t+1 validated against the result.
      settle(active);
      return LaneStep::kRan;
    }
    switch (settle(active)) {
      case Settled::kDone:
      case Settled::kFailed:
      case Settled::kIdle:
        return LaneStep::kRan;
      case Settled::kRedo:
        break;
    }
  }
  return LaneStep::kNeedsLaunch;
}

void DecodeLane::fail_rows(std::vector<ActiveSeq>& active, std::string_view msg) {
  for (ActiveSeq& a : active) send_error(io_, a, msg);
  active.clear();
}

Settled DecodeLane::settle(std::vector<ActiveSeq>& active) {
  if (!pipe_.inflight.has_value()) return Settled::kIdle;
  Inflight inf = std::move(*pipe_.inflight);
  pipe_.inflight.reset();
  MET_CHECK(rows_match(inf, active), "pipelined step settled against a different batch");
  const Status st = io_.dev.await_result(inf.ticket, result_);
  if (!st.ok()) {
    // Every row is told, as the synchronous step does; a step launched ahead
    // is awaited and dropped with the rows.
    drop_next();
    set_fault(fmt::format("a forward step failed: {}", st.message()));
    fail_rows(active, fmt::format("the device failed ({}); the server is shutting down", st.message()));
    return Settled::kFailed;
  }
  if (cost_ != nullptr) cost_->observe(static_cast<int32_t>(active.size()), result_.busy_ns);
  // Over-runs hand their reserved block back before anything else runs.
  if (inf.inputs.has_value()) {
    for (size_t i = 0; i < active.size(); ++i) {
      if (inf.discard_all || inf.discard[i]) io_.kv.apply(Rollback{&active[i].seq});
    }
  }
  if (inf.discard_all) {
    MET_CHECK(!pipe_.next.has_value(), "no step is launched ahead of a redo");
    recycle(std::move(inf));
    return Settled::kRedo;
  }
  MET_CHECK(inf.has_logits || !inf.host_logits, "host sampling needs the step's logits");
  for (size_t i = 0; i < active.size(); ++i) {
    if (inf.discard[i]) continue;
    ActiveSeq& a = active[i];
    a.seq.seq_len += 1;
    // The step launched ahead (position seq_len) reads nothing behind this.
    release_behind_window(io_, a.seq, kv_window_);
    const TokenId token = pick_token(a, result_, i, inf.host_logits, pick_scratch_);
    commit_token(io_, a, token, max_seq_len_);
    note_mtp_draft(a, result_, i, token);
  }
  StepRecord record;
  record.num_rows = static_cast<int32_t>(active.size());
  record.decode_tokens = record.num_rows;
  record.num_blocks_in_use = io_.kv.num_blocks_in_use();
  record.device_busy_ns = result_.busy_ns;
  io_.tel.step_done(record);
  if (pipe_.next.has_value()) {
    Inflight next = std::move(*pipe_.next);
    pipe_.next.reset();
    auto [validated, poisoned] = validate_next(std::move(next), active, result_.argmax);
    if (poisoned) {
      // The step is awaited so the device is quiet; its rows are failed rather
      // than served from a state that cannot be rewound.
      (void)io_.dev.await_result(validated.ticket, dropped_);
      MET_LOG_ERROR("{}", kPoisonedAheadMessage);
      fail_rows(active, kPoisonedAheadMessage);
      return Settled::kFailed;
    }
    pipe_.inflight = std::move(validated);
  }
  recycle(std::move(inf));
  return Settled::kDone;
}

std::pair<Inflight, bool> DecodeLane::validate_next(Inflight next, std::vector<ActiveSeq>& active,
                                                    std::span<const TokenId> prev_tokens) {
  MET_CHECK(next.inputs.has_value(), "a step launched ahead is fed");
  MET_CHECK(rows_match(next, active), "pipelined step validated against a different batch");
  const bool repick_only = io_.dev.info().fed_ahead_policy == FedAheadPolicy::kRepickOnly;
  bool poisoned = false;
  const std::vector<RowInput>& inputs = *next.inputs;
  for (size_t i = 0; i < active.size(); ++i) {
    const ActiveSeq& a = active[i];
    const TokenId input = std::holds_alternative<FeedFromRow>(inputs[i])
                              ? prev_tokens[static_cast<size_t>(std::get<FeedFromRow>(inputs[i]).output_index)]
                              : std::get<FeedToken>(inputs[i]).id;
    const bool over_run = a.status.finished || a.seq.tokens.back() != input || a.seq.seq_len != next.rows[i].position;
    next.discard[i] = over_run;
    // Only a finished row's over-run is harmless when a step cannot be re-run.
    poisoned = poisoned || (repick_only && over_run && !a.status.finished);
  }
  survivors_.clear();
  for (size_t i = 0; i < active.size(); ++i) {
    if (!next.discard[i]) survivors_.push_back(&active[i]);
  }
  next.host_logits = !argmax_readback_eligible(survivors_);
  if (!next.host_logits) {
    // The masks were fixed at launch; if a survivor's mask changed, the step
    // is redone (or, RepickOnly, the forward stands and the host picks).
    bool stale_mask = false;
    for (size_t i = 0; i < active.size(); ++i) {
      if (!next.discard[i] && row_mask(active[i]) != next.masks[i]) stale_mask = true;
    }
    if (repick_only) {
      next.host_logits = stale_mask;
    } else {
      next.discard_all = stale_mask;
    }
  }
  if (next.host_logits && !next.has_logits) next.discard_all = true;  // no logits came back: redo
  // The inputs are known now: a kept row's snapshot is keyed by its prefix.
  for (const PendingSnapshot& p : next.snapshots) {
    const auto row = static_cast<size_t>(p.row);
    if (poisoned || next.discard_all || next.discard[row]) {
      io_.kv.cancel_snapshot(p.slot);
    } else {
      io_.kv.fulfil_snapshot(p.slot, active[row].seq, p.num_tokens);
    }
  }
  next.snapshots.clear();
  return {std::move(next), poisoned};
}

void DecodeLane::drain(std::vector<ActiveSeq>& active) {
  while (pipe_.has_inflight()) {
    if (settle(active) != Settled::kDone) break;
  }
}

void DecodeLane::abandon() {
  if (pipe_.inflight.has_value()) (void)io_.dev.await_result(pipe_.inflight->ticket, dropped_);
  pipe_.inflight.reset();
  drop_next();
}

}  // namespace met
