// Tests for scheduler/plan_builder.h.
#include "scheduler/plan_builder.h"

#include <gtest/gtest.h>

namespace met {
namespace {

std::vector<BlockId> table(std::initializer_list<int32_t> ids) {
  std::vector<BlockId> t;
  for (int32_t i : ids) t.emplace_back(i);
  return t;
}

TEST(PlanBuilder, HoldsExactlyTheSeqsAddedSinceBegin) {
  PlanBuilder b(4);
  StepPlan& p = b.begin();
  p.inputs.push_back(FeedToken{1});
  p.positions.push_back(0);
  b.add_seq(0, 1, 0, table({3}));
  p.inputs.push_back(FeedToken{2});
  p.positions.push_back(5);
  b.add_seq(1, 1, 5, table({4}));
  EXPECT_EQ(b.finish().seqs.size(), 2u);

  StepPlan& q = b.begin();
  EXPECT_TRUE(q.inputs.empty());
  q.inputs.push_back(FeedToken{7});
  q.positions.push_back(16);
  b.add_seq(0, 1, 16, table({9, 8}));
  const StepPlan& done = b.finish();
  ASSERT_EQ(done.seqs.size(), 1u);
  EXPECT_EQ(done.seqs[0].num_cached, 16);
  EXPECT_EQ(done.seqs[0].block_table, table({9, 8}));
  EXPECT_TRUE(validate_plan(done, 16, 100, kKvBlockTokens, /*window=*/0).ok());
}

TEST(PlanBuilder, ReusesTheStorageOfTrimmedTables) {
  PlanBuilder b(4);
  b.begin();
  b.add_seq(0, 1, 0, table({1, 2, 3, 4, 5, 6, 7, 8}));
  b.add_seq(1, 1, 0, table({9}));
  b.finish();
  const BlockId* first = b.plan().seqs[0].block_table.data();
  b.begin();
  b.add_seq(0, 1, 0, table({1}));
  b.finish();
  b.begin();
  b.add_seq(0, 1, 0, table({2}));
  b.add_seq(1, 1, 0, table({3, 4}));
  b.finish();
  EXPECT_EQ(b.plan().seqs[0].block_table.data(), first);  // the same storage, reused
  EXPECT_EQ(b.plan().seqs[1].block_table, table({3, 4}));
}

}  // namespace
}  // namespace met
