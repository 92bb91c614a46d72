// Health. Tested by tests/server/health_test.cc.
#include "server/health.h"

#include <fmt/format.h>

#include <algorithm>

namespace met {
namespace {

const char* state_name(HealthState s) {
  switch (s) {
    case HealthState::kOk: return "ok";
    case HealthState::kLoading: return "loading";
    case HealthState::kFaulted: return "faulted";
    case HealthState::kStalled: return "stalled";
  }
  return "unknown";
}

}  // namespace

HealthVerdict decide_health(const HealthInputs& in) {
  if (in.fault) return {HealthState::kFaulted, *in.fault};
  if (in.loading) return {HealthState::kLoading, "the model is loading"};
  const EngineStatsSnapshot& s = in.stats;
  if (!in.stall_timeout || !s.has_work) return {HealthState::kOk, ""};
  std::optional<TimePoint> progress = s.busy_since;
  if (s.last_step_at) progress = progress ? std::max(*progress, *s.last_step_at) : *s.last_step_at;
  if (!progress || s.taken_at - *progress <= *in.stall_timeout) return {HealthState::kOk, ""};
  const double idle_s = std::chrono::duration<double>(s.taken_at - *progress).count();
  const double limit_s = std::chrono::duration<double>(*in.stall_timeout).count();
  return {HealthState::kStalled,
          fmt::format("work is waiting but no engine step completed for {:.1f} s (--stall-timeout {:g})", idle_s,
                      limit_s)};
}

int health_http_status(HealthState state) { return state == HealthState::kOk ? 200 : 503; }

nlohmann::ordered_json health_body(const HealthVerdict& v) {
  nlohmann::ordered_json j;
  j["status"] = state_name(v.state);
  if (!v.reason.empty()) j["reason"] = v.reason;
  return j;
}

}  // namespace met
