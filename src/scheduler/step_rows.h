// choose_step_rows: which rows the next forward step holds, a pure function
// over the running sequences: a decode row for every sequence that decodes
// (slot order) and whose next block, if it needs one, is free; then, for
// each of them with drafts, its verify rows (all of them, or none) where the
// budget, the free blocks and the device's outputs allow; then prefill
// chunks, oldest admission first, each as long as the step's token budget,
// the blocks free after the rows before it, and (for prompt logprobs, a
// logits row per prompt row) the device's outputs allow; a prompt that must
// run whole (a non-causal model's) waits until it fits in one chunk. StepBuilder applies
// the choice: it reserves each row's KV and writes the StepPlan. Blocks
// given back behind a sliding window do not count against the pool.
// Invariants: the rows never exceed max_batch_tokens; the blocks they need
// never exceed num_free_blocks; a sequence appears at most once.
// Threading: pure. Tested by tests/scheduler/step_rows_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace met {

struct RowView {
  bool finished = false;
  int32_t seq_len = 0;     // tokens whose KV is computed
  int32_t num_tokens = 0;  // prompt + output so far
  int32_t num_blocks = 0;  // entries its table holds, released ones included
  int32_t num_released_blocks = 0;  // leading entries given back (behind its window)
  uint64_t admit_order = 0;
  // Prompt logprobs still wanted: prompt tokens [prompt_logprobs_next,
  // prompt_len) miss theirs.
  bool wants_prompt_logprobs = false;
  int32_t prompt_logprobs_next = 0;
  int32_t prompt_len = 0;
  // Drafts a decoding sequence would verify after its decode row, each a
  // row with an output (speculation.h).
  int32_t num_drafts = 0;
  // An embedding: at most one output row per chunk (a hidden state).
  bool embeds = false;
  // A model without causal attention: the prompt runs in one chunk or waits.
  bool whole_prompt = false;
};

struct RowChoice {
  size_t active_idx = 0;
  int32_t num_rows = 0;
  friend bool operator==(const RowChoice&, const RowChoice&) = default;
};

struct StepLimits {
  int32_t max_batch_tokens = 0;
  int32_t max_outputs = 0;      // the device's output rows per step
  int32_t num_blocks = 0;       // the pool's size
  int32_t num_free_blocks = 0;  // free + evictable now
};

// Fills `out` (cleared first) with the step's rows, decode rows first;
// `order` is scratch.
void choose_step_rows(std::span<const RowView> rows, const StepLimits& limits, std::vector<RowChoice>& out,
                      std::vector<size_t>& order);

}  // namespace met
