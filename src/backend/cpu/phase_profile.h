// PhaseProfile: where a WorkerPool job's time goes, phase by phase. A phase
// runs from one barrier's release (or the job's start) to the next
// barrier's release (or the job's end); it is timed on thread 0, whose clock
// every phase passes through, and keyed by the source line of the barrier
// that ends it (ThreadCtx::barrier's caller, or the caller of a function
// that passes its own caller's line on, as linear() does). Beside each
// phase's time, how much of it thread 0 spent waiting at that barrier for
// the others: the imbalance (or a partner's sleep) the phase cost.
// `met bench --phases` prints it per decode figure; a pool without one
// (WorkerPool::set_phase_profile) pays nothing.
// Threading: begin_job, end_phase and end_job from one pool's thread 0
// only; snapshot and reset from its owner while no job is in flight (the
// pool's wait() orders the two). Tested by tests/backend/phase_profile_test.cc.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace met::cpu {

// A source line, taken where a function with a `CallSite where =
// CallSite::here()` parameter is called (std::source_location's role; the
// builtins serve both GCC and clang 14, whose libstdc++ <source_location>
// does not build).
struct CallSite {
  const char* file;
  uint32_t line;
  const char* function;  // unqualified
  static constexpr CallSite here(const char* file = __builtin_FILE(), uint32_t line = __builtin_LINE(),
                                 const char* function = __builtin_FUNCTION()) {
    return CallSite{file, line, function};
  }
};

struct PhaseStat {
  std::string file;      // "model/moe_ffn.cc" (src/ dropped) or "tests/..."
  uint32_t line = 0;
  std::string function;  // unqualified
  int64_t calls = 0;
  double seconds = 0.0;         // wall time of the phase, summed
  double waited_seconds = 0.0;  // of it, thread 0 waiting at the closing barrier
};

class PhaseProfile {
 public:
  using Clock = std::chrono::steady_clock;

  void begin_job(Clock::time_point now) { phase_start_ = now; }
  // The phase ending at the barrier at `where`: thread 0 arrived at
  // `arrived` and was released at `released`.
  void end_phase(const CallSite& where, Clock::time_point arrived, Clock::time_point released);
  // The job's last phase, from its last barrier to `now`.
  void end_job(Clock::time_point now);

  // Every phase recorded since the last reset, one per source line, the
  // longest first.
  std::vector<PhaseStat> snapshot() const;
  // Jobs ended since the last reset.
  int64_t jobs() const { return jobs_; }
  void reset();

 private:
  struct Site {
    const char* file;
    uint32_t line;
    const char* function;
    int64_t calls;
    int64_t ns;
    int64_t waited_ns;
  };
  Site& site(const CallSite& where);

  std::vector<Site> sites_;  // a few dozen: found by a linear scan
  Clock::time_point phase_start_{};
  int64_t jobs_ = 0;
};

}  // namespace met::cpu
