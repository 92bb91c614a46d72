// EngineTelemetry: the engine's `tel` port. Every call goes on to the
// counters (EngineStats) and to the RequestBoard; while anyone subscribes to
// the telemetry stream, each settled step (with the preemptions, spills and
// restores since the one before it) and each lifecycle event is also staged
// on the TelemetryFeed, which the engine flushes once per tick.
// Times: the engine's steady Clock, mapped onto the wall clock (Unix ms) by
// the offset between the two taken at construction.
// Invariants: no lock and no allocation per token (step records carry no
// strings; the feed's lock is taken once per tick); a step's host_unhidden_us
// counts only within a busy spell (note_idle() starts a new one).
// Threading: engine thread only, but the EngineStats it holds is read from
// any thread. Tested by tests/engine/engine_telemetry_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/clock.h"
#include "engine/engine_stats.h"
#include "engine/request_board.h"
#include "engine/telemetry_feed.h"
#include "scheduler/io.h"

namespace met {

class EngineTelemetry final : public TelPort {
 public:
  // Borrows clock, stats and feed; they outlive it.
  EngineTelemetry(const Clock& clock, EngineStats& stats, TelemetryFeed& feed);

  void request_finished(const RequestTiming& t) override { stats_.request_finished(t); }
  void request_failed() override { stats_.request_failed(); }
  void preempted(PreemptKind kind) override;
  void cache_queried(int64_t query_tokens, int64_t hit_tokens) override {
    stats_.cache_queried(query_tokens, hit_tokens);
  }
  void step_done(const StepRecord& step) override;
  void speculated(int32_t drafted, int32_t accepted) override { stats_.speculated(drafted, accepted); }
  void drafts_withheld(int32_t n) override { stats_.drafts_withheld(n); }
  void request_event(const RequestEvent& event) override;
  void spilled(int64_t bytes, Duration took) override;
  void restored(int64_t bytes, Duration took) override;

  // The engine is about to wait for work: the next step starts a busy spell.
  void note_idle() { last_step_at_.reset(); }
  int64_t unix_ms(TimePoint t) const;
  const RequestBoard& board() const { return board_; }
  // The requests that ended since the last call, appended to `out` (the
  // engine forgets their streams).
  void take_ended(std::vector<RequestId>& out);

 private:
  const Clock& clock_;
  EngineStats& stats_;
  TelemetryFeed& feed_;
  RequestBoard board_;
  int64_t wall_origin_ms_ = 0;
  TimePoint clock_origin_;
  std::optional<TimePoint> last_step_at_;
  StepTelemetry pending_;  // preemptions, spills and restores since the last step
  std::vector<RequestId> ended_;
};

}  // namespace met
