// Scheduler: continuous batching over the paged KV cache (DESIGN.md). It owns
// the waiting, active and swapped queues; effects go through SchedIo and
// SpillIo. One tick: settle the pipelined lane (or drain it when the queues
// need the device quiet); retire cancelled and timed-out requests and
// finished sequences; decide (plan_tick over a view of the queues: preempt
// for the decode rows, resume, admit with prefix hits) and apply the plan;
// choose the step's rows (choose_step_rows) and build the step; run it, or
// hand a decode-only step to the lane; settle each output (sample, guards,
// stream; give back the blocks behind a sliding window); retire.
// Invariants: DESIGN.md 1-5 (one terminal frame per request; every block
// returned; failed never cached; finish reasons; salted prefix hits).
// Threading: engine thread only. Tested by tests/scheduler/scheduler_test.cc.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string_view>
#include <vector>

#include "grammar/token_trie.h"
#include "kv/kv_manager.h"
#include "kv/spill_io.h"
#include "request/engine_request.h"
#include "request/request_limits.h"
#include "scheduler/active_seq.h"
#include "scheduler/decode_lane.h"
#include "scheduler/dev_port.h"
#include "scheduler/io.h"
#include "scheduler/preempt.h"
#include "scheduler/speculation.h"
#include "scheduler/step_builder.h"
#include "scheduler/tick_plan.h"
#include "tokenizer/tokenizer.h"

namespace met {

struct SchedulerOptions {
  int32_t max_seqs = 64;            // sequences running at once
  int32_t max_batch_tokens = 512;   // rows per step (decode rows + prefill chunks)
  PreemptMode preempt = PreemptMode::kRecompute;  // kSwap needs a SpillIo
  int32_t max_seq_len = 0;          // served context ceiling; 0: the device's
  bool pipeline = true;             // launch decode steps ahead (decode_lane.h)
  // Give back the blocks behind every layer's window as sequences grow
  // (DeviceInfo::kv_window); false keeps every block (a reference run).
  bool release_behind_window = true;
  SpecOptions spec;  // speculative decoding (speculation.h); off by default
};

// Where a request stands in the scheduler's queues (Scheduler::describe).
enum class SeqPhase : uint8_t { kWaiting, kPreempted, kPrefill, kRunning, kSwapped };

struct SeqProgress {
  RequestId id;
  SeqPhase phase = SeqPhase::kWaiting;
  int32_t output_tokens = 0;
  int32_t kv_blocks = 0;  // blocks it holds (a swapped one: in its image)
};

struct SchedulerCounts {
  size_t num_waiting = 0;
  size_t num_active = 0;
  size_t num_swapped = 0;
};

class Scheduler {
 public:
  // `spill` may be null (then preemption recomputes). Checks the options.
  static Result<std::unique_ptr<Scheduler>> create(SchedIo io, SpillIo* spill, const Tokenizer& tokenizer,
                                                   SchedulerOptions options);
  ~Scheduler();

  RequestLimits limits() const;
  // Queues a request. REQUIRES: it passed validate_request against limits()
  // (Engine::submit checks it once; max_tokens 0 is answered at once).
  void enqueue(EngineRequest request, ResponseSink sink, TimePoint submitted);
  // One tick; false when there was nothing to do.
  bool tick();
  bool idle() const { return waiting_.empty() && active_.empty() && swapped_.empty(); }
  // Answers every request with an error frame and releases everything
  // (shutdown, or the process faulted).
  void fail_all(std::string_view message);
  SchedulerCounts counts() const { return {waiting_.size(), active_.size(), swapped_.size()}; }
  // Appends every request it holds (waiting, running, swapped) to `out`.
  void describe(std::vector<SeqProgress>& out) const;

 private:

  Scheduler(SchedIo io, SpillIo* spill, const Tokenizer& tokenizer, SchedulerOptions options);
  ActiveSeq make_seq(EngineRequest&& r, ResponseSink&& sink, TimePoint submitted);
  void reserve_for_output(ActiveSeq& a, int32_t max_tokens) const;
  void retire_cancelled_and_timed_out();
  void retire_finished();
  // Fills view_ (and the admission candidates' hits) from the queues.
  void view_queues();
  // Applies plan_ in its order: preemptions, resumes, admissions.
  void apply_plan();
  void resume_front();
  void admit_front(size_t waiting_idx);
  void preempt(size_t idx);
  void requeue(ActiveSeq a);
  void run_step();
  void settle_step();
  void collect_victim_candidates();
  // The pool is dry: the chosen victim is preempted (true), or a sequence
  // alone is cut short with kv_exhausted (false: nothing more to free).
  bool give_way();
  bool needs_quiet() const;
  // Proposes every running sequence's drafts within the draft budget
  // (DraftPlanner); whether any has one.
  bool propose_all_drafts(DraftPlanner::Mode mode);
  // Whether the step in flight computes MTP guesses the next step would
  // verify (DraftPlanner::inflight_guesses_stand): the lane settles first.
  bool inflight_guesses_stand();
  // Whether the steps built next compute the MTP block's guesses
  // (DraftPlanner::mtp_guesses_pay), told to the step builder and the lane.
  void decide_mtp_guesses();
  void after_lane();

  SchedIo io_;
  SpillIo* spill_;
  const Tokenizer& tokenizer_;
  SchedulerOptions options_;
  size_t max_seq_len_ = 0;
  int32_t kv_window_ = 0;  // blocks behind it are given back (0: none are)
  std::vector<TokenId> model_eos_;


  std::deque<ActiveSeq> waiting_;   // FCFS; preempted sequences first, by admission
  std::vector<ActiveSeq> active_;   // active_[i].seq.slot_idx == i
  std::deque<SwappedSeq> swapped_;  // FCFS by swap-out

  DecodeLane lane_;
  StepBuilder step_;
  DraftPlanner drafts_;
  StepResult result_;
  PickScratch pick_scratch_;
  std::unique_ptr<TokenTrie> trie_;  // built at the first request with a grammar
  std::vector<size_t> order_;
  std::vector<VictimCandidate> candidates_;
  // The tick's decision, and the storage its view and plan reuse.
  TickView view_;
  TickPlan plan_;
  TickPlanScratch plan_scratch_;
  std::vector<RunningView> running_views_;
  std::vector<SwappedView> swapped_views_;
  std::vector<WaitingView> waiting_views_;
  std::vector<BlockId> idle_hits_;
  // Each admission candidate's whole hit: hit_blocks_[hits_begin_[i], + its
  // waiting_views_[i].hit_blocks).
  std::vector<BlockId> hit_blocks_;
  std::vector<size_t> hits_begin_;
  SpillImage image_;
  uint64_t next_seq_id_ = 1;
  uint64_t next_admit_order_ = 1;
  uint64_t next_swap_id_ = 1;
};

}  // namespace met
