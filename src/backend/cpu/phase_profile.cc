// PhaseProfile. Tested by tests/backend/phase_profile_test.cc.
#include "backend/cpu/phase_profile.h"

#include <algorithm>
#include <string_view>

namespace met::cpu {
namespace {

int64_t nanos(PhaseProfile::Clock::duration d) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
}

// The path as the build gave it, from the tree's src/ folder on without it
// ("/work/met/src/model/moe_ffn.cc" -> "model/moe_ffn.cc") or from its
// tests/ folder on.
std::string short_file(std::string_view file) {
  for (const std::string_view root : {std::string_view("src/"), std::string_view("tests/")}) {
    const size_t at = file.rfind(root);
    if (at == std::string_view::npos || (at > 0 && file[at - 1] != '/')) continue;
    return std::string(file.substr(root == "src/" ? at + root.size() : at));
  }
  return std::string(file);
}

// The job's last phase: keyed by this line.
constexpr CallSite kJobEnd = CallSite::here();

}  // namespace

PhaseProfile::Site& PhaseProfile::site(const CallSite& where) {
  for (Site& s : sites_) {
    if (s.line == where.line && s.file == where.file) return s;
  }
  sites_.push_back(Site{where.file, where.line, where.function, 0, 0, 0});
  return sites_.back();
}

void PhaseProfile::end_phase(const CallSite& where, Clock::time_point arrived,
                             Clock::time_point released) {
  Site& s = site(where);
  ++s.calls;
  s.ns += nanos(released - phase_start_);
  s.waited_ns += nanos(released - arrived);
  phase_start_ = released;
}

void PhaseProfile::end_job(Clock::time_point now) {
  Site& s = site(kJobEnd);
  ++s.calls;
  s.ns += nanos(now - phase_start_);
  ++jobs_;
}

std::vector<PhaseStat> PhaseProfile::snapshot() const {
  std::vector<PhaseStat> out;
  for (const Site& s : sites_) {
    // One line can be two sites: two translation units (an inline
    // function's copies) may each hold a copy of the file name.
    std::string file = short_file(s.file);
    auto same = [&](const PhaseStat& p) { return p.line == s.line && p.file == file; };
    auto it = std::find_if(out.begin(), out.end(), same);
    if (it == out.end()) {
      const bool job_end = s.file == kJobEnd.file && s.line == kJobEnd.line;
      out.push_back(PhaseStat{std::move(file), s.line, job_end ? "(the job's last phase)" : s.function, 0, 0.0, 0.0});
      it = out.end() - 1;
    }
    it->calls += s.calls;
    it->seconds += static_cast<double>(s.ns) * 1e-9;
    it->waited_seconds += static_cast<double>(s.waited_ns) * 1e-9;
  }
  std::sort(out.begin(), out.end(), [](const PhaseStat& a, const PhaseStat& b) { return a.seconds > b.seconds; });
  return out;
}

void PhaseProfile::reset() {
  sites_.clear();
  jobs_ = 0;
}

}  // namespace met::cpu
