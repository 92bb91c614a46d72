// plan_tick. Tested by tests/scheduler/tick_plan_test.cc.
#include "scheduler/tick_plan.h"

#include <algorithm>

#include "kv/kv_block.h"

namespace met {
namespace {

// Step 1: preempts until the decode rows' new blocks fit. Returns the blocks
// those rows take.
int32_t plan_decode_room(const TickView& v, TickPlan& plan, TickPlanScratch& s, int32_t& free_blocks) {
  int32_t need = 0;
  s.candidates.clear();
  for (size_t i = 0; i < v.running.size(); ++i) {
    const RunningView& r = v.running[i];
    if (r.finished) continue;
    if (r.needs_block) ++need;
    s.candidates.push_back(i);
  }
  std::vector<VictimCandidate>& cands = s.victim_candidates;
  while (need > free_blocks && !s.candidates.empty()) {
    if (s.candidates.size() == 1) {
      plan.cut_short = v.running[s.candidates[0]].id;
      break;
    }
    cands.clear();
    for (size_t i : s.candidates) {
      const RunningView& r = v.running[i];
      cands.push_back(VictimCandidate{r.admit_order, r.num_output_tokens, r.immune_until_tokens});
    }
    const size_t pick = *choose_decode_victim(cands);
    const RunningView& victim = v.running[s.candidates[pick]];
    plan.victims.push_back(victim.id);
    free_blocks += victim.num_sole_blocks;
    if (victim.needs_block) --need;
    s.candidates.erase(s.candidates.begin() + static_cast<std::ptrdiff_t>(pick));
  }
  return need;
}

// Whether `key` is a first block some running or just-admitted sequence is
// computing.
bool first_block_in_flight(const TickView& v, const TickPlanScratch& s, const BlockKey& key) {
  for (const RunningView& r : v.running) {
    if (!r.finished && r.computing_first_block == key) return true;
  }
  return std::find(s.computing.begin(), s.computing.end(), key) != s.computing.end();
}

// Step 3: admissions FCFS.
void plan_admissions(const TickView& v, TickPlan& plan, TickPlanScratch& s, int32_t avail, int32_t slots) {
  s.claimed.clear();
  s.computing.clear();
  for (const WaitingView& w : v.waiting) {
    if (slots <= 0) return;
    if (w.may_share_first_block && w.first_block.has_value() && first_block_in_flight(v, s, *w.first_block)) return;
    int32_t revived = 0;
    for (size_t k = 0; k < w.num_idle_hits; ++k) {
      const BlockId b = v.hit_block_ids[w.idle_hits_begin + k];
      if (std::find(s.claimed.begin(), s.claimed.end(), b) == s.claimed.end()) ++revived;
    }
    const int32_t hit_tokens = w.hit_blocks * kKvBlockTokens;
    const int32_t chunk = std::min(w.num_tokens - hit_tokens, v.max_batch_tokens);
    int32_t need = blocks_for_tokens(hit_tokens + chunk) - w.hit_blocks;
    if (v.kv_window > 0) need = std::min(need, window_min_blocks(v.kv_window));
    if (need > avail - revived) return;
    for (size_t k = 0; k < w.num_idle_hits; ++k) s.claimed.push_back(v.hit_block_ids[w.idle_hits_begin + k]);
    avail -= revived;
    if (w.first_block.has_value() && w.hit_blocks == 0) s.computing.push_back(*w.first_block);
    ++plan.num_admissions;
    --slots;
  }
}

}  // namespace

void plan_tick(const TickView& v, TickPlan& plan, TickPlanScratch& s) {
  plan.clear();
  int32_t free_blocks = v.num_free_blocks;
  const int32_t decode_need = plan_decode_room(v, plan, s, free_blocks);
  if (!plan.victims.empty() || plan.cut_short.has_value()) return;

  int32_t slots = v.max_seqs - static_cast<int32_t>(v.running.size());
  int32_t avail = free_blocks - decode_need;
  int32_t resumed_blocks = 0;
  for (const SwappedView& sw : v.swapped) {
    if (slots <= 0 || avail < std::min(sw.num_blocks + 1, v.num_blocks)) break;
    ++plan.num_resumes;
    avail -= sw.num_blocks;
    resumed_blocks += sw.num_blocks;
    --slots;
  }
  if (static_cast<size_t>(plan.num_resumes) < v.swapped.size()) return;  // swapped sequences go first
  // Resumes allocate before admissions revive their hits: an allocation that
  // would evict a cached block could take a hit, so admissions wait a tick.
  if (resumed_blocks > v.num_unkeyed_free_blocks) return;
  plan_admissions(v, plan, s, avail, slots);
}

}  // namespace met
