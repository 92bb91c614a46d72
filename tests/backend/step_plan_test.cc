// Tests for step_plan.h: a well-formed plan validates, and each documented
// invariant, broken alone, gives an invalid-argument error naming the seq,
// row or output at fault; clear() empties a plan; released block-table
// entries pass only wholly before a window.
#include "backend/step_plan.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

namespace met {
namespace {

constexpr int32_t kMaxBlocks = 64;
constexpr int32_t kMaxContext = 256;
constexpr int32_t kBlockTokens = 16;  // token slots per block, as the devices have
constexpr int32_t kNoWindow = 0;      // some layer reads the whole context

// Two sequences: a prefill chunk of 3 rows after 14 cached tokens (positions
// 14..16, two blocks) and a decode row at position 40 (three blocks).
StepPlan make_plan() {
  StepPlan plan;
  plan.inputs = {FeedToken{5}, FeedToken{6}, FeedToken{7}, FeedFromRow{0}};
  plan.positions = {14, 15, 16, 40};
  plan.seqs.push_back(StepSeq{0, 3, 14, {BlockId(3), BlockId(9)}, std::nullopt});
  plan.seqs.push_back(StepSeq{3, 1, 40, {BlockId(0), BlockId(1), BlockId(2)}, std::nullopt});
  plan.outputs = {{2, OutputKind::kLogits}, {3, OutputKind::kArgmax}};
  return plan;
}

TEST(StepPlan, AWellFormedPlanIsValid) {
  EXPECT_TRUE(validate_plan(make_plan(), kMaxBlocks, kMaxContext, kBlockTokens, kNoWindow).ok());
}

TEST(StepPlan, AnEmptyPlanIsValid) {
  EXPECT_TRUE(validate_plan(StepPlan{}, kMaxBlocks, kMaxContext, kBlockTokens, kNoWindow).ok());
}

TEST(StepPlan, ClearEmptiesEveryList) {
  StepPlan plan = make_plan();
  plan.clear();
  EXPECT_EQ(plan.num_rows(), 0);
  EXPECT_TRUE(plan.positions.empty());
  EXPECT_TRUE(plan.seqs.empty());
  EXPECT_TRUE(plan.outputs.empty());
}

struct BrokenCase {
  std::string name;
  std::function<void(StepPlan&)> breaks;
  std::string message_part;  // the error names this
};

TEST(StepPlan, EachBrokenInvariantIsReported) {
  const BrokenCase cases[] = {
      {"positions missing", [](StepPlan& p) { p.positions.pop_back(); }, "4 inputs but 3 positions"},
      {"negative feed", [](StepPlan& p) { p.inputs[3] = FeedFromRow{-1}; }, "row 3"},
      {"gap between seqs", [](StepPlan& p) { p.seqs[1].row_begin = 4; }, "seq 1 starts at row 4"},
      {"seq overlaps", [](StepPlan& p) { p.seqs[0].num_rows = 4; }, "seq 0 row 3 is at position 40"},
      {"rows uncovered", [](StepPlan& p) { p.seqs.pop_back(); }, "cover rows [0, 3) of 4"},
      {"empty seq", [](StepPlan& p) { p.seqs[1].num_rows = 0; }, "seq 1 has 0 rows"},
      {"seq past the rows", [](StepPlan& p) { p.seqs[1].num_rows = 2; }, "seq 1 has 2 rows"},
      {"negative cache", [](StepPlan& p) { p.seqs[0].num_cached = -1; }, "seq 0 has -1 cached"},
      {"position skips", [](StepPlan& p) { p.positions[1] = 16; }, "seq 0 row 1 is at position 16"},
      {"position not after cache", [](StepPlan& p) { p.positions[3] = 41; },
       "seq 1 row 3 is at position 41, expected 40"},
      {"past the context", [](StepPlan& p) {
         p.seqs[1].num_cached = kMaxContext;
         p.positions[3] = kMaxContext;
       }, "past the context"},
      {"block table short", [](StepPlan& p) { p.seqs[1].block_table.pop_back(); },
       "seq 1 needs 3 KV blocks"},
      {"block id too large", [](StepPlan& p) { p.seqs[0].block_table[1] = BlockId(kMaxBlocks); },
       "seq 0 block 1 is id 64"},
      {"negative block id", [](StepPlan& p) { p.seqs[1].block_table[0] = BlockId(-2); },
       "seq 1 block 0 is id -2"},
      {"output out of range", [](StepPlan& p) { p.outputs[1].row = 4; }, "output 1 names row 4"},
      {"output repeated", [](StepPlan& p) { p.outputs[1].row = 2; }, "output 1 repeats row 2"},
      {"banned ids past the list", [](StepPlan& p) {
         p.banned = {5};
         p.outputs[1].banned_begin = 0;
         p.outputs[1].num_banned = 2;
       }, "output 1 bans ids [0, +2) of 1"},
  };
  for (const BrokenCase& c : cases) {
    StepPlan plan = make_plan();
    c.breaks(plan);
    const Status status = validate_plan(plan, kMaxBlocks, kMaxContext, kBlockTokens, kNoWindow);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << c.name;
    EXPECT_NE(status.message().find(c.message_part), std::string::npos)
        << c.name << ": " << status.message();
  }
}

TEST(StepPlan, ABlockBoundaryNeedsTheNextBlock) {
  StepPlan plan;
  plan.inputs = {FeedToken{1}};
  plan.positions = {kBlockTokens};  // the first token of the second block
  plan.seqs.push_back(StepSeq{0, 1, kBlockTokens, {BlockId(0)}, std::nullopt});
  EXPECT_FALSE(validate_plan(plan, kMaxBlocks, kMaxContext, kBlockTokens, kNoWindow).ok());
  plan.seqs[0].block_table.push_back(BlockId(1));
  EXPECT_TRUE(validate_plan(plan, kMaxBlocks, kMaxContext, kBlockTokens, kNoWindow).ok());
}

// The decode row at position 40 with a window of 8 reads positions 33..40:
// blocks 0 (0..15) and 1 (16..31) are behind it, block 2 (32..47) is not.
TEST(StepPlan, AReleasedEntryIsValidOnlyWhollyBeforeTheWindowOfTheSeqsFirstRow) {
  constexpr int32_t kWindow = 8;
  StepPlan plan = make_plan();
  plan.seqs[1].block_table[0] = kReleasedBlock;
  plan.seqs[1].block_table[1] = kReleasedBlock;
  EXPECT_TRUE(validate_plan(plan, kMaxBlocks, kMaxContext, kBlockTokens, kWindow).ok());
  const Status dense = validate_plan(plan, kMaxBlocks, kMaxContext, kBlockTokens, kNoWindow);
  EXPECT_NE(dense.message().find("seq 1 block 0 was released"), std::string::npos) << dense.message();
  EXPECT_FALSE(validate_plan(plan, kMaxBlocks, kMaxContext, kBlockTokens, 10).ok());  // reads from 31
  plan.seqs[1].block_table[2] = kReleasedBlock;
  const Status inside = validate_plan(plan, kMaxBlocks, kMaxContext, kBlockTokens, kWindow);
  EXPECT_NE(inside.message().find("seq 1 block 2 was released"), std::string::npos) << inside.message();
  // The prefill chunk's first row, at 14, reads from 7: none of its blocks is behind.
  StepPlan chunk = make_plan();
  chunk.seqs[0].block_table[0] = kReleasedBlock;
  EXPECT_FALSE(validate_plan(chunk, kMaxBlocks, kMaxContext, kBlockTokens, kWindow).ok());
}

}  // namespace
}  // namespace met

namespace met {
namespace {

TEST(StepPlan, AdapterSlotsAreNoneOrBelowTheDevicesCount) {
  StepPlan plan = make_plan();
  EXPECT_TRUE(validate_adapter_slots(plan, 0).ok());  // every seq runs the base model
  plan.seqs[1].adapter_slot = 1;
  EXPECT_TRUE(validate_adapter_slots(plan, 2).ok());
  const Status past = validate_adapter_slots(plan, 1);
  EXPECT_EQ(past.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(past.message().find("seq 1 runs adapter slot 1; the device has 1 adapter slots"), std::string::npos)
      << past.message();
  plan.seqs[0].adapter_slot = -2;
  EXPECT_NE(validate_adapter_slots(plan, 2).message().find("seq 0 runs adapter slot -2"), std::string::npos);
}

TEST(StepPlan, CopyPlanCopiesEverySeqFieldAndTheMtpGuessesFlag) {
  StepPlan plan = make_plan();
  plan.seqs[0].state_slot = StateSlotId(3);
  plan.seqs[0].state_checkpoints = true;
  plan.seqs[0].mtp_chain = 2;
  plan.seqs[1].adapter_slot = 4;
  plan.mtp_guesses = false;
  StepPlan copy;
  copy_plan(plan, copy);
  EXPECT_FALSE(copy.mtp_guesses);
  ASSERT_EQ(copy.seqs.size(), plan.seqs.size());
  for (size_t i = 0; i < plan.seqs.size(); ++i) {
    const StepSeq& a = plan.seqs[i];
    const StepSeq& b = copy.seqs[i];
    EXPECT_EQ(a.row_begin, b.row_begin);
    EXPECT_EQ(a.num_rows, b.num_rows);
    EXPECT_EQ(a.num_cached, b.num_cached);
    EXPECT_EQ(a.block_table, b.block_table);
    EXPECT_EQ(a.state_slot, b.state_slot);
    EXPECT_EQ(a.state_checkpoints, b.state_checkpoints);
    EXPECT_EQ(a.mtp_chain, b.mtp_chain);
    EXPECT_EQ(a.adapter_slot, b.adapter_slot) << "seq " << i;
  }
}

}  // namespace
}  // namespace met
