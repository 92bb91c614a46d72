// RequestTimer: times one generation request's events for ServerMetrics:
// TTFT (arrival to the first delta carrying tokens), the gap before each
// later token-carrying delta (split over its tokens), end-to-end latency at
// the terminal event, and a success by finish reason (an error frame is
// counted by the engine, not here), with its tokens per LoRA adapter.
// Invariants: each request observes TTFT at most once and e2e exactly once
// (at its terminal event).
// Threading: on_event runs on the request's connection strand only.
// Tested by tests/server/request_timer_test.cc.
#pragma once

#include <optional>
#include <string>

#include "core/clock.h"
#include "request/response_sink.h"
#include "server/server_metrics.h"

namespace met {

class RequestTimer {
 public:
  // Borrows both; they outlive the timer. `arrived`: when the request's body
  // was read.
  RequestTimer(ServerMetrics& metrics, const Clock& clock, TimePoint arrived)
      : metrics_(metrics), clock_(clock), arrived_(arrived) {}

  void on_event(const StreamEvent& event);
  // The request ran LoRA adapter `name`: its finish is counted for it too.
  void set_adapter(std::string name) { adapter_ = std::move(name); }

 private:
  ServerMetrics& metrics_;
  const Clock& clock_;
  TimePoint arrived_;
  std::optional<TimePoint> last_token_at_;
  std::string adapter_;  // "": the base model
};

}  // namespace met
