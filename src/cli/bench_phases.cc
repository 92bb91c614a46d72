// `met bench --phases` tables. Tested by tests/cli/bench_phases_test.cc.
#include "cli/bench_phases.h"

#include <fmt/format.h>

#include <algorithm>

namespace met {
namespace {

double per_step(double seconds, const PhaseReport& r) {
  return seconds / static_cast<double>(std::max<int64_t>(r.steps, 1));
}

double phases_per_step(const PhaseReport& r) {
  double sum = 0.0;
  for (const cpu::PhaseStat& p : r.phases) sum += p.seconds;
  return per_step(sum, r);
}

std::string table_line(double us, double share, const std::string& waited, const std::string& calls,
                       const std::string& what) {
  return fmt::format("    {:>10.1f} {:>6.1f}% {:>7} {:>10}  {}\n", us, 100.0 * share, waited, calls, what);
}

}  // namespace

std::string phase_table(const PhaseReport& r, double min_share) {
  const double step = r.step_seconds > 0.0 ? r.step_seconds : phases_per_step(r);
  std::string out = fmt::format("    {:>10} {:>7} {:>7} {:>10}  {}\n", "us/step", "share", "waited", "calls/step",
                                "phase (the barrier that ends it)");
  double rest = 0.0;
  int rest_lines = 0;
  for (const cpu::PhaseStat& p : r.phases) {
    const double s = per_step(p.seconds, r);
    if (step > 0.0 && s / step < min_share) {
      rest += s;
      ++rest_lines;
      continue;
    }
    const std::string waited =
        p.seconds > 0.0 ? fmt::format("{:.1f}%", 100.0 * p.waited_seconds / p.seconds) : std::string("-");
    out += table_line(s * 1e6, step > 0.0 ? s / step : 0.0, waited,
                      fmt::format("{:.1f}", per_step(static_cast<double>(p.calls), r)),
                      fmt::format("{}:{} {}", p.file, p.line, p.function));
  }
  if (rest_lines > 0) {
    out += table_line(rest * 1e6, step > 0.0 ? rest / step : 0.0, "", "",
                      fmt::format("{} other phases", rest_lines));
  }
  const double host = std::max(0.0, step - phases_per_step(r));
  out += table_line(host * 1e6, step > 0.0 ? host / step : 0.0, "", "", "between jobs (host: plans, results)");
  return out;
}

nlohmann::json phase_json(const PhaseReport& r) {
  nlohmann::json j;
  j["steps"] = r.steps;
  j["step_seconds"] = r.step_seconds;
  j["host_seconds_per_step"] = std::max(0.0, r.step_seconds - phases_per_step(r));
  j["phases"] = nlohmann::json::array();
  for (const cpu::PhaseStat& p : r.phases) {
    j["phases"].push_back({{"file", p.file},
                           {"line", p.line},
                           {"function", p.function},
                           {"calls_per_step", per_step(static_cast<double>(p.calls), r)},
                           {"seconds_per_step", per_step(p.seconds, r)},
                           {"waited_seconds_per_step", per_step(p.waited_seconds, r)}});
  }
  return j;
}

}  // namespace met
