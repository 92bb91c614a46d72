// plan_tick: the scheduler's queue decisions for one tick, a pure function
// over a read-only view of the queues (vLLM v1's order):
//  1. room for the decode rows: every running sequence whose next token
//     starts a new KV block needs one; while they need more than is free, the
//     latest admitted non-immune sequence is preempted (preempt.h), and a
//     sequence left alone is cut short instead (it needs more than the pool);
//  2. only when nothing was preempted: swapped sequences resume FCFS while a
//     slot and their blocks (plus one to grow) are free beyond the decode
//     rows' needs;
//  3. only when every swapped sequence resumed: waiting requests are admitted
//     FCFS while a slot is free and their first chunk fits beside their
//     prefix-cache hit (with a sliding window, at most the blocks the window
//     needs: the step's rows then take the chunk the free blocks allow, and
//     the blocks behind the window come back as it goes); a request whose first block another sequence is
//     computing now (in-batch prefix sharing, SGLang's) stops admission
//     until that block is published, so FCFS order holds.
// Scheduler::tick applies the plan in that order; nothing is taken before it
// is decided, so no admission retains blocks it then gives back.
// Invariants: the plan never asks for more blocks than the view says are free
// (hit blocks that are evictable count against the free ones, once each);
// admissions follow resumes only when the resumes' allocations cannot evict a
// hit block (they fit in unkeyed free blocks).
// Threading: pure. Tested by tests/scheduler/tick_plan_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/ids.h"
#include "kv/block_key.h"
#include "scheduler/preempt.h"

namespace met {

// A running sequence as the decisions see it.
struct RunningView {
  SeqId id;
  bool finished = false;
  // Its next decode row starts a block it does not hold yet.
  bool needs_block = false;
  // Blocks it alone references (freed if it is preempted).
  int32_t num_sole_blocks = 0;
  uint64_t admit_order = 0;
  size_t num_output_tokens = 0;
  size_t immune_until_tokens = 0;
  // The key of the first block while this sequence is prefilling it.
  std::optional<BlockKey> computing_first_block;
};

struct SwappedView {
  int32_t num_blocks = 0;  // blocks its image restores
};

// A waiting request and its prefix-cache hit, looked up without retaining.
struct WaitingView {
  int32_t num_tokens = 0;
  int32_t hit_blocks = 0;
  // Hit blocks that no sequence references now (reviving one takes it from
  // the free count), as indices into TickView::hit_block_ids.
  size_t idle_hits_begin = 0;
  size_t num_idle_hits = 0;
  // The key of its first block when it has more than one block's tokens.
  std::optional<BlockKey> first_block;
  // It waits while another sequence computes its first block (false when it
  // wants prompt logprobs: it evaluates every position itself).
  bool may_share_first_block = true;
};

struct TickView {
  int32_t max_seqs = 0;
  int32_t max_batch_tokens = 0;
  int32_t num_blocks = 0;              // the pool's size
  int32_t num_free_blocks = 0;         // free + evictable
  int32_t num_unkeyed_free_blocks = 0; // free and holding no cached prefix
  int32_t kv_window = 0;               // blocks behind it are given back (0: none are)
  std::span<const RunningView> running;
  std::span<const SwappedView> swapped;  // FCFS
  // The first waiting requests, FCFS: as many as could be admitted at most.
  std::span<const WaitingView> waiting;
  std::span<const BlockId> hit_block_ids;
};

struct TickPlan {
  std::vector<SeqId> victims;         // preempted, in this order
  std::optional<SeqId> cut_short;     // alone and out of blocks: kv_exhausted
  int32_t num_resumes = 0;            // swapped.front() first
  int32_t num_admissions = 0;         // waiting.front() first

  void clear() {
    victims.clear();
    cut_short.reset();
    num_resumes = 0;
    num_admissions = 0;
  }
};

// Storage plan_tick reuses from tick to tick.
struct TickPlanScratch {
  std::vector<size_t> candidates;     // indices into view.running
  std::vector<VictimCandidate> victim_candidates;
  std::vector<BlockId> claimed;       // idle hit blocks the plan revives
  std::vector<BlockKey> computing;    // first blocks being computed
};

// Fills `plan` (cleared first).
void plan_tick(const TickView& view, TickPlan& plan, TickPlanScratch& scratch);

}  // namespace met
