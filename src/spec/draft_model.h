// DraftModel: drafts from a smaller model with the target's vocabulary
// (llama.cpp's --model-draft, vLLM's draft model), run greedily on a Device
// of its own with a KV pool of its own. For each asking sequence it keeps
// the tokens whose KV its pool holds and their blocks; a propose first
// catches each sequence up (the tokens its KV does not hold yet, from the
// first that differs: a rejected draft's KV is overwritten in place, so no
// rollback is needed), in chunks batched across sequences, the last row of
// each giving the first draft; then one step per further draft, each feeding
// every sequence's previous draft. Drafts are the draft model's argmax: a
// point mass, which the target's verification accepts by spec/acceptance.h's
// rule, so output never depends on the draft model, only speed does.
// A draft model with recurrent layers (DeviceInfo::num_state_slots > 0)
// gives each sequence a state slot of its own and tracks the positions the
// slot's versions hold (its rollback ring, DeviceInfo::state_rollback): a
// catch-up starts from the newest version at or before the first token that
// differs (from token 0 when none is), so a rejected draft's state is
// rewound, not recomputed, while the ring is deeper than the drafts.
// A sequence the pool cannot hold (or, with state, that finds no free slot)
// gives its blocks back and gets no drafts while it runs (it never evicts
// another's). A failed draft step is logged and turns drafting off for
// good: the target's output is unaffected.
// Invariants: a track's blocks cover every position its KV holds; its
// tokens are the tokens at those positions; blocks are either free or held
// by exactly one track, and so are state slots; a track's versions are the
// positions its slot holds a state after, newest last.
// Threading: one caller (the engine thread); the device may compute on its
// own threads. Tested by tests/spec/draft_model_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "backend/device.h"
#include "backend/step_plan.h"
#include "core/ids.h"

namespace met {

struct DraftAsk {
  uint64_t seq_id = 0;
  // The sequence's tokens: prompt, then output; the last is the token the
  // target runs next (its KV is not in the target's cache yet).
  std::span<const TokenId> tokens;
  int32_t num_drafts = 0;                  // >= 1
  std::vector<TokenId>* drafts = nullptr;  // replaced by up to num_drafts tokens
};

class DraftModel {
 public:
  // `device` runs the draft model and outlives this; its whole KV pool is
  // the drafter's.
  explicit DraftModel(Device& device);
  DraftModel(const DraftModel&) = delete;
  DraftModel& operator=(const DraftModel&) = delete;

  // Fills every ask's drafts. An ask that does not fit the draft model's
  // context or pool, or comes after a failure, gets none.
  void propose(std::span<DraftAsk> asks);
  // Gives back the blocks of every sequence not in `live` (the running
  // sequences' ids, any order).
  void retain_only(std::span<const uint64_t> live);

  const DeviceInfo& info() const { return device_.info(); }
  int32_t num_free_blocks() const { return static_cast<int32_t>(free_.size()); }
  int32_t num_tracked() const { return static_cast<int32_t>(tracks_.size()); }
  bool failed() const { return failed_; }
  int64_t num_steps() const { return num_steps_; }    // draft steps run
  int64_t busy_ns() const { return busy_ns_; }        // their device time

 private:
  struct Track {
    uint64_t seq_id = 0;
    std::vector<TokenId> tokens;  // tokens whose KV the track's blocks hold
    std::vector<BlockId> blocks;
    bool starved = false;         // the pool could not hold it: no drafts
    std::optional<StateSlotId> slot;  // models with recurrent layers
    std::vector<int32_t> versions;    // positions the slot holds a state after
  };
  struct Job {
    DraftAsk* ask = nullptr;
    Track* track = nullptr;
    int32_t output = -1;  // its output in the step being run; -1: none
    int32_t rows = 0;     // its rows in that step
  };

  Track& track_for(uint64_t seq_id);
  void release(Track& t);
  // Trims `t` to what `ask` shares with it (keeping at least the last token
  // to run) and gives it the blocks for the ask's drafts; false: no drafts.
  bool prepare(Track& t, const DraftAsk& ask);
  // Runs chunks until every job's track holds its ask's tokens, each job's
  // first draft from its last row; false: the device failed.
  bool catch_up();
  // One step feeding each job's draft `k - 1`, for draft k; false: failed.
  bool extend(int32_t k);
  void begin_plan();
  void add_seq(Job& job, std::span<const TokenId> inputs, bool with_output);
  bool run();
  void fail(const Status& status);
  // Models with recurrent layers: `t` holds no state version at `tokens`
  // (the catch-up must start earlier): the newest position at or before it
  // that one holds, else 0.
  size_t state_start(const Track& t, size_t tokens) const;
  // Records that a step advanced `t`'s slot from `from` to `to` tokens.
  void note_state(Track& t, int32_t from, int32_t to) const;

  Device& device_;
  int32_t block_tokens_ = 0;
  std::vector<Track> tracks_;
  std::vector<BlockId> free_;
  std::vector<StateSlotId> free_slots_;  // models with recurrent layers
  size_t kept_versions_ = 1;             // versions a slot keeps (1 + DeviceInfo::state_rollback)
  std::vector<Job> jobs_;
  StepPlan plan_;
  size_t num_seqs_ = 0;  // plan_.seqs in use (the rest keep their tables' storage)
  StepResult result_;
  bool failed_ = false;
  int64_t num_steps_ = 0;
  int64_t busy_ns_ = 0;
};

}  // namespace met
