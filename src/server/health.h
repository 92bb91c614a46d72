// Health: what GET /health answers, decided from plain values. 200 "ok" when
// the engine is making progress; 503 while the model loads ("loading"), after
// a fault ("faulted", with its reason), or when there is work but no step has
// completed within the stall timeout ("stalled"). Stalls are measured on the
// engine's clock from the later of the last completed step and the moment
// the engine last became busy, so an idle spell is never a stall.
// Threading: pure functions. Tested by tests/server/health_test.cc.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/clock.h"
#include "engine/engine_stats.h"

namespace met {

enum class HealthState { kOk, kLoading, kFaulted, kStalled };

struct HealthInputs {
  bool loading = false;
  std::optional<std::string> fault;  // the fault's reason, when faulted
  EngineStatsSnapshot stats;         // ignored while loading
  std::optional<Duration> stall_timeout;  // nullopt: stalls are not checked
};

struct HealthVerdict {
  HealthState state = HealthState::kOk;
  std::string reason;  // "" when ok
};

HealthVerdict decide_health(const HealthInputs& in);

// 200 for kOk, else 503.
int health_http_status(HealthState state);
// {"status": "ok"|"loading"|"faulted"|"stalled", "reason"?: ...}
nlohmann::ordered_json health_body(const HealthVerdict& v);

}  // namespace met
