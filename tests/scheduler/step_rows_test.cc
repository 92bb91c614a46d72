// Tests for scheduler/step_rows.h: which rows a step holds, over plain data.
#include "scheduler/step_rows.h"

#include <gtest/gtest.h>

#include <vector>

namespace met {
namespace {

RowView decoding(int32_t seq_len, int32_t num_blocks, uint64_t admit_order = 1) {
  RowView r;
  r.seq_len = seq_len;
  r.num_tokens = seq_len + 1;
  r.num_blocks = num_blocks;
  r.admit_order = admit_order;
  return r;
}

RowView prefilling(int32_t seq_len, int32_t num_tokens, int32_t num_blocks, uint64_t admit_order) {
  RowView r;
  r.seq_len = seq_len;
  r.num_tokens = num_tokens;
  r.num_blocks = num_blocks;
  r.admit_order = admit_order;
  return r;
}

std::vector<RowChoice> choose(const std::vector<RowView>& rows, int32_t budget, int32_t free_blocks,
                              int32_t max_outputs = 64, int32_t num_blocks = 64) {
  std::vector<RowChoice> out;
  std::vector<size_t> order;
  choose_step_rows(rows, StepLimits{budget, max_outputs, num_blocks, free_blocks}, out, order);
  return out;
}

TEST(ChooseStepRows, DecodeRowsFirstInSlotOrderThenChunksOldestAdmissionFirst) {
  const std::vector<RowView> rows = {prefilling(0, 40, 0, 5), decoding(10, 1), prefilling(0, 30, 0, 3),
                                     decoding(20, 2)};
  // 2 decode rows, then 30 of seq 2 (admitted 3rd), then 8 of seq 0.
  EXPECT_EQ(choose(rows, 40, 10),
            (std::vector<RowChoice>{{1, 1}, {3, 1}, {2, 30}, {0, 8}}));
}

RowView with_drafts(RowView r, int32_t k) {
  r.num_drafts = k;
  return r;
}

// Every decode row is placed before any verify row; a sequence's drafts go
// whole or not at all, where the budget, the blocks and the outputs allow;
// prefill chunks take what is left.
TEST(ChooseStepRows, VerifyRowsFollowEveryDecodeRowAndFitWholeOrNotAtAll) {
  const std::vector<RowView> rows = {with_drafts(decoding(10, 1), 4), decoding(20, 2),
                                     with_drafts(decoding(30, 2), 3), prefilling(0, 40, 0, 5)};
  // Room for all: 5 + 1 + 4 rows (seq 2's drafts reach position 33: a third block), then 10 of the prompt.
  EXPECT_EQ(choose(rows, 20, 10), (std::vector<RowChoice>{{0, 5}, {1, 1}, {2, 4}, {3, 10}}));
  // A budget of 6: the three decode rows, then seq 0's 4 drafts do not fit, seq 2's 3 do.
  EXPECT_EQ(choose(rows, 6, 10), (std::vector<RowChoice>{{0, 1}, {1, 1}, {2, 4}}));
  // No free block: seq 2's drafts need one, seq 0's do not.
  EXPECT_EQ(choose(rows, 20, 0), (std::vector<RowChoice>{{0, 5}, {1, 1}, {2, 1}}));
  // Outputs for 3 decode rows and 4 drafts: seq 0's only.
  EXPECT_EQ(choose(rows, 20, 10, 7), (std::vector<RowChoice>{{0, 5}, {1, 1}, {2, 1}, {3, 13}}));
}

TEST(ChooseStepRows, AChunkIsCutToTheBlocksLeftAfterTheRowsBeforeIt) {
  // The decode row at position 16 needs a second block; one block is left
  // for the prompt: 16 tokens of it.
  const std::vector<RowView> rows = {decoding(16, 1), prefilling(0, 50, 0, 2)};
  EXPECT_EQ(choose(rows, 512, 2), (std::vector<RowChoice>{{0, 1}, {1, 16}}));
}

TEST(ChooseStepRows, ADecodeRowWithoutAFreeBlockWaitsAndOthersGo) {
  const std::vector<RowView> rows = {decoding(16, 1), decoding(5, 1), decoding(32, 2)};
  EXPECT_EQ(choose(rows, 512, 0), (std::vector<RowChoice>{{1, 1}}));
}

TEST(ChooseStepRows, TheTokenBudgetBoundsTheStep) {
  const std::vector<RowView> rows = {decoding(3, 1), decoding(4, 1), prefilling(0, 100, 0, 2)};
  EXPECT_EQ(choose(rows, 1, 10), (std::vector<RowChoice>{{0, 1}}));
  EXPECT_EQ(choose(rows, 10, 10), (std::vector<RowChoice>{{0, 1}, {1, 1}, {2, 8}}));
}

TEST(ChooseStepRows, FinishedSequencesGetNoRows) {
  RowView done = decoding(3, 1);
  done.finished = true;
  EXPECT_TRUE(choose({done}, 10, 10).empty());
}

TEST(ChooseStepRows, PromptLogprobChunksFitTheDevicesOutputsWithOneKeptForTheSampledToken) {
  RowView r = prefilling(0, 30, 0, 1);
  r.wants_prompt_logprobs = true;
  r.prompt_logprobs_next = 1;
  r.prompt_len = 30;
  // 8 outputs, 2 taken by the decode rows: 5 prompt rows and one kept.
  const std::vector<RowView> rows = {decoding(3, 1), decoding(4, 1), r};
  EXPECT_EQ(choose(rows, 512, 10, 8), (std::vector<RowChoice>{{0, 1}, {1, 1}, {2, 5}}));
}

TEST(ChooseStepRows, ARowThatWouldNeedMoreThanThePoolIsLeftOut) {
  EXPECT_TRUE(choose({decoding(64, 4)}, 10, 10, 64, 4).empty());
}

// A sequence past a sliding window holds 4 live blocks of its 32 entries:
// its next row takes a 33rd entry, 5 live blocks, from a pool of 8.
TEST(ChooseStepRows, ADecodeRowCountsOnlyTheLiveBlocksOfItsTableAgainstThePool) {
  RowView r = decoding(32 * 16, 32);
  EXPECT_TRUE(choose({r}, 10, 8, 64, 8).empty());
  r.num_released_blocks = 28;
  EXPECT_EQ(choose({r}, 10, 8, 64, 8), (std::vector<RowChoice>{{0, 1}}));
}

}  // namespace
}  // namespace met
