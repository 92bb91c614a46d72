// `met bench --phases`: a decode figure's steps, phase by phase (the
// PhaseProfile of the CPU device's worker pool), as a table under the
// figure's line or as JSON. Each phase is the span between two barriers,
// named by the source line of the barrier that ends it; what the steps'
// wall time holds beyond the phases is the host's time between jobs.
// Threading: pure functions. Tested by tests/cli/bench_phases_test.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/cpu/phase_profile.h"

namespace met {

struct PhaseReport {
  std::vector<cpu::PhaseStat> phases;  // the longest first
  int64_t steps = 0;                   // the timed steps they cover
  double step_seconds = 0.0;           // wall time per step, as the figure measured it
};

// Phases of at least `min_share` of a step's wall time one line each, the
// rest summed on one line, then the host's time between the jobs.
std::string phase_table(const PhaseReport& r, double min_share = 0.005);

// Every phase: file, line, function, calls and seconds (and seconds thread
// 0 waited) per step, and the host's seconds per step.
nlohmann::json phase_json(const PhaseReport& r);

}  // namespace met
