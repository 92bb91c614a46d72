// EngineTelemetry. Tested by tests/engine/engine_telemetry_test.cc.
#include "engine/engine_telemetry.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace met {
namespace {

int64_t micros(Duration d) { return std::chrono::duration_cast<std::chrono::microseconds>(d).count(); }
double millis(Duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

}  // namespace

EngineTelemetry::EngineTelemetry(const Clock& clock, EngineStats& stats, TelemetryFeed& feed)
    : clock_(clock), stats_(stats), feed_(feed), clock_origin_(clock.now()) {
  wall_origin_ms_ = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
}

int64_t EngineTelemetry::unix_ms(TimePoint t) const {
  return wall_origin_ms_ + std::chrono::duration_cast<std::chrono::milliseconds>(t - clock_origin_).count();
}

void EngineTelemetry::preempted(PreemptKind kind) {
  stats_.preempted(kind);
  ++pending_.preemptions;
}

void EngineTelemetry::spilled(int64_t bytes, Duration took) {
  stats_.spilled(bytes, took);
  ++pending_.spills;
  pending_.spill_bytes += bytes;
  pending_.spill_ms += millis(took);
}

void EngineTelemetry::restored(int64_t bytes, Duration took) {
  stats_.restored(bytes, took);
  ++pending_.restores;
  pending_.restore_bytes += bytes;
  pending_.restore_ms += millis(took);
}

void EngineTelemetry::step_done(const StepRecord& step) {
  stats_.step_done(step);
  const TimePoint now = clock_.now();
  StepTelemetry t = pending_;
  pending_ = StepTelemetry{};
  t.rows = step.num_rows;
  t.prefill_tokens = step.prefill_tokens;
  t.decode_tokens = step.decode_tokens;
  t.kv_blocks_in_use = step.num_blocks_in_use;
  t.device_busy_us = step.device_busy_ns / 1000;
  if (last_step_at_.has_value()) {
    t.host_unhidden_us = std::max<int64_t>(0, micros(now - *last_step_at_) - t.device_busy_us);
  }
  last_step_at_ = now;
  if (feed_.has_subscribers()) feed_.stage(unix_ms(now), t);
}

void EngineTelemetry::request_event(const RequestEvent& e) {
  const int64_t ms = unix_ms(clock_.now());
  board_.on_event(e, ms);
  if (e.kind == RequestEventKind::kFinished || e.kind == RequestEventKind::kFailed) ended_.push_back(e.id);
  if (!feed_.has_subscribers()) return;
  RequestTelemetry r;
  r.event = request_event_name(e.kind);
  r.id = e.id;
  r.tenant = e.tenant;
  r.adapter = e.adapter;
  r.prompt_tokens = e.prompt_tokens;
  r.cached_tokens = e.cached_tokens;
  r.output_tokens = e.output_tokens;
  r.finish_reason = e.finish_reason;
  r.guard = e.guard;
  r.error = e.error;
  feed_.stage(ms, std::move(r));
}

void EngineTelemetry::take_ended(std::vector<RequestId>& out) {
  out.insert(out.end(), ended_.begin(), ended_.end());
  ended_.clear();
}

}  // namespace met
