// StepBuilder: builds one forward step from the running sequences: the rows
// choose_step_rows (step_rows.h) decides, each with its KV reserved. The
// last chunk of a prompt gets an output row: its logits, or only its argmax
// for a greedy sequence (with EOS banned on the device while min_tokens
// holds). A decoding sequence with drafts (ActiveSeq::spec, proposed before
// the build) gets a row per draft it was given room for, fed the draft, each
// with an argmax output (speculation.h); drafts it got no room for are
// dropped. A sequence that wants prompt logprobs gets a logits row
// for every prompt row, so its chunks also fit the device's max_outputs.
// An embedding's chunks get a hidden output where its pooling reads one
// (record_embedding keeps it); nothing is sampled for it.
// Invariants: every scheduled sequence has the blocks its rows write
// (reserved here); the plan's rows never exceed the budget.
// Threading: engine thread only. Tested through tests/scheduler/scheduler_test.cc
// (the row choice itself by tests/scheduler/step_rows_test.cc).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "backend/device.h"
#include "kv/kv_manager.h"
#include "scheduler/active_seq.h"
#include "scheduler/plan_builder.h"
#include "scheduler/step_rows.h"

namespace met {

struct Scheduled {
  size_t active_idx = 0;
  int32_t num_rows = 0;
  std::optional<int32_t> output;  // index into the step's outputs
  // Prompt logprob rows: outputs [prompt_outputs_begin, + num_prompt_outputs)
  // predict prompt tokens first_predicted, first_predicted + 1, ...
  int32_t prompt_outputs_begin = 0;
  int32_t num_prompt_outputs = 0;
  int32_t first_predicted = 0;
  // A verify step (speculation.h): the drafts after the decode row, each
  // row with an output (outputs *output .. *output + num_drafts).
  int32_t num_drafts = 0;
  bool embeds = false;  // an embedding's chunk: its output (if any) is a hidden state
};

// Appends the logprobs of the prompt tokens a step's rows predicted for `a`
// (sampling/logprobs.h) and advances a.prompt_logprobs_next.
void record_prompt_logprobs(ActiveSeq& a, const Scheduled& s, const StepResult& result);

// Keeps what a step's chunk of embedding `a` gave its pooling (after its
// seq_len took the chunk's rows): the sum of a mean, the CLS or last row's
// state; a chunk from the prompt's start drops what an earlier run left.
void record_embedding(ActiveSeq& a, const Scheduled& s, const StepResult& result);

class StepBuilder {
 public:
  explicit StepBuilder(size_t max_seqs);

  // Fills plan() with the rows choose_step_rows picks, reserving each row's
  // KV through `kv`; false when nothing could be scheduled. Hybrid models: a
  // prompt chunk stops at the next state-snapshot boundary, where the step
  // snapshots the state when `kv` says one is due (and a decode row at each
  // block boundary, its rolling snapshot), and a sequence admitted from a
  // snapshot restores it in its first step.
  bool build(std::vector<ActiveSeq>& active, const DeviceInfo& info, KvManager& kv, int32_t max_batch_tokens);

  StepPlan& plan() { return builder_.plan(); }
  // Whether the steps built from now on compute the MTP block's guesses
  // (StepPlan::mtp_guesses; without, no seq chains).
  void set_mtp_guesses(bool guesses) { mtp_guesses_ = guesses; }
  std::span<const Scheduled> scheduled() const { return scheduled_; }
  // One decode row with an output for each of `num_active` rows, in order.
  bool is_decode_only(size_t num_active) const;

 private:
  void add(ActiveSeq& a, size_t idx, int32_t n);
  // Appends rows for the next n of a's known tokens; returns the first row.
  int32_t add_known_rows(const ActiveSeq& a, int32_t n);
  void add_embedding(ActiveSeq& a, size_t idx, int32_t n);
  void add_verify(ActiveSeq& a, size_t idx, int32_t n);
  void add_prompt_outputs(const ActiveSeq& a, int32_t begin, int32_t n, Scheduled& s);
  static int32_t cut_at_snapshot(const ActiveSeq& a, int32_t num_rows, int32_t next);
  static std::optional<StateCopy> snapshot_after(const ActiveSeq& a, int32_t n, KvManager& kv);

  PlanBuilder builder_;
  std::vector<Scheduled> scheduled_;
  std::vector<RowView> views_;
  std::vector<RowChoice> rows_;
  std::vector<size_t> order_;
  int32_t mtp_drafts_ = 0;  // DeviceInfo::mtp_drafts of the step being built
  bool mtp_guesses_ = true;  // StepPlan::mtp_guesses of the steps built
};

}  // namespace met
