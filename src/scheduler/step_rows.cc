// choose_step_rows. Tested by tests/scheduler/step_rows_test.cc.
#include "scheduler/step_rows.h"

#include <algorithm>
#include <limits>

#include "kv/kv_block.h"

namespace met {
namespace {

// Output rows a chunk of n rows from `r` adds: a logits row for each prompt
// token it predicts that still misses its logprob, and the sampled token's
// row when the chunk ends the known tokens.
int32_t outputs_of(const RowView& r, int32_t n) {
  if (r.embeds) return 1;
  if (r.num_tokens - r.seq_len == 1) return n;  // a decode row and its verify rows: one each
  int32_t outputs = r.seq_len + n == r.num_tokens ? 1 : 0;
  if (!r.wants_prompt_logprobs) return outputs;
  for (int32_t q = r.seq_len + 1; q <= r.seq_len + n; ++q) {
    if (q >= r.prompt_logprobs_next && q < r.prompt_len) ++outputs;
  }
  return outputs;
}

// Extends the decode rows of sequences with drafts by one row per draft when
// all of them fit (rows, blocks, outputs); the decode rows were all placed
// first, so drafts never cost a sequence its decode row.
void add_verify_rows(std::span<const RowView> rows, const StepLimits& limits, std::vector<RowChoice>& out,
                     int32_t& budget, int32_t& free_blocks, int32_t& num_outputs) {
  for (RowChoice& c : out) {
    const RowView& r = rows[c.active_idx];
    const int32_t k = r.num_drafts;
    if (k <= 0 || k > budget || num_outputs + k > limits.max_outputs) continue;
    const int32_t have = std::max(r.num_blocks, blocks_for_tokens(r.seq_len + 1));
    const int32_t want = blocks_for_tokens(r.seq_len + 1 + k);
    if (want - r.num_released_blocks > limits.num_blocks || want - have > free_blocks) continue;
    free_blocks -= std::max(want - have, 0);
    c.num_rows += k;
    num_outputs += k;
    budget -= k;
  }
}

}  // namespace

void choose_step_rows(std::span<const RowView> rows, const StepLimits& limits, std::vector<RowChoice>& out,
                      std::vector<size_t>& order) {
  out.clear();
  int32_t budget = limits.max_batch_tokens;
  int32_t free_blocks = limits.num_free_blocks;
  int32_t num_outputs = 0;
  for (size_t i = 0; i < rows.size() && budget > 0; ++i) {
    const RowView& r = rows[i];
    if (r.finished || r.num_tokens - r.seq_len != 1) continue;
    const int32_t want = blocks_for_tokens(r.seq_len + 1);
    if (want - r.num_released_blocks > limits.num_blocks) continue;
    const int32_t new_blocks = std::max(want - r.num_blocks, 0);
    if (new_blocks > free_blocks) continue;
    free_blocks -= new_blocks;
    out.push_back(RowChoice{i, 1});
    num_outputs += outputs_of(r, 1);
    budget -= 1;
  }
  add_verify_rows(rows, limits, out, budget, free_blocks, num_outputs);
  order.clear();
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i].finished && rows[i].num_tokens - rows[i].seq_len > 1) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return rows[x].admit_order < rows[y].admit_order; });
  for (size_t i : order) {
    if (budget <= 0) break;
    const RowView& r = rows[i];
    const int32_t room = (r.num_blocks + free_blocks) * kKvBlockTokens - r.seq_len;
    // With prompt logprobs every row may take an output: one is kept for the
    // chunk's sampled token.
    const int32_t output_room = r.wants_prompt_logprobs ? limits.max_outputs - num_outputs - 1
                                                        : std::numeric_limits<int32_t>::max();
    const int32_t n = std::min({r.num_tokens - r.seq_len, budget, room, output_room});
    if (n <= 0 || (r.whole_prompt && n < r.num_tokens - r.seq_len)) continue;
    free_blocks -= std::max(blocks_for_tokens(r.seq_len + n) - r.num_blocks, 0);
    out.push_back(RowChoice{i, n});
    num_outputs += outputs_of(r, n);
    budget -= n;
  }
}

}  // namespace met
