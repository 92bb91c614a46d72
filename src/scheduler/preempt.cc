// Victim choice. Tested by tests/scheduler/preempt_test.cc.
#include "scheduler/preempt.h"

namespace met {

std::optional<size_t> choose_decode_victim(std::span<const VictimCandidate> candidates) {
  std::optional<size_t> best_eligible;
  std::optional<size_t> best_any;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const VictimCandidate& c = candidates[i];
    if (!best_any || c.admit_order > candidates[*best_any].admit_order) best_any = i;
    const bool immune = c.num_output_tokens < c.immune_until_tokens;
    if (!immune && (!best_eligible || c.admit_order > candidates[*best_eligible].admit_order)) best_eligible = i;
  }
  return best_eligible ? best_eligible : best_any;
}

}  // namespace met
