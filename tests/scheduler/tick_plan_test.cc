// Tests for scheduler/tick_plan.h: the tick's queue decisions over plain
// data, no device.
#include "scheduler/tick_plan.h"

#include <gtest/gtest.h>

#include <vector>

namespace met {
namespace {

RunningView running(uint64_t id, uint64_t admit_order, bool needs_block = false, int32_t sole_blocks = 1) {
  RunningView r;
  r.id = SeqId(id);
  r.admit_order = admit_order;
  r.needs_block = needs_block;
  r.num_sole_blocks = sole_blocks;
  return r;
}

WaitingView waiting(int32_t num_tokens, int32_t hit_blocks = 0) {
  WaitingView w;
  w.num_tokens = num_tokens;
  w.hit_blocks = hit_blocks;
  return w;
}

// A pool of `num_blocks`, `free` of them free (none holding a cached prefix
// unless `unkeyed` says fewer), 4 slots, 64 tokens per step.
struct Queues {
  std::vector<RunningView> run;
  std::vector<SwappedView> swapped;
  std::vector<WaitingView> wait;
  std::vector<BlockId> idle_hits;
  int32_t num_blocks = 16;
  int32_t free = 16;
  int32_t unkeyed = -1;
  int32_t kv_window = 0;

  TickPlan plan() const {
    TickView v;
    v.max_seqs = 4;
    v.max_batch_tokens = 64;
    v.num_blocks = num_blocks;
    v.num_free_blocks = free;
    v.num_unkeyed_free_blocks = unkeyed < 0 ? free : unkeyed;
    v.kv_window = kv_window;
    v.running = run;
    v.swapped = swapped;
    v.waiting = wait;
    v.hit_block_ids = idle_hits;
    TickPlan p;
    TickPlanScratch s;
    plan_tick(v, p, s);
    return p;
  }
};

TEST(PlanTick, AdmitsWaitingRequestsFirstComeFirstServedWithinTheSlots) {
  Queues q;
  q.run = {running(1, 1)};
  q.wait = {waiting(20), waiting(20), waiting(20), waiting(20)};
  const TickPlan p = q.plan();
  EXPECT_EQ(p.num_admissions, 3);  // 4 slots, one taken
  EXPECT_TRUE(p.victims.empty());
}

TEST(PlanTick, StopsAtTheFirstRequestWhoseFirstChunkDoesNotFit) {
  Queues q;
  q.free = 3;
  // 40 tokens: 3 blocks; 100 tokens: its first 64-token chunk takes 4.
  // (Each first chunk is checked against the free blocks on its own: the
  // step's rows share them out, oldest admission first.)
  q.wait = {waiting(40), waiting(100), waiting(10)};
  EXPECT_EQ(q.plan().num_admissions, 1);  // FCFS: the third waits behind the second
}

TEST(PlanTick, APrefixHitNeedsBlocksOnlyForTheRest) {
  Queues q;
  q.free = 2;
  WaitingView w = waiting(64, 3);  // 48 tokens hit, in blocks other sequences hold
  q.wait = {w};
  EXPECT_EQ(q.plan().num_admissions, 1);  // 16 more tokens: one block
}

TEST(PlanTick, RevivingAnEvictableHitBlockCountsAgainstTheFreeOnesOnce) {
  Queues q;
  q.free = 3;
  q.idle_hits = {BlockId(7), BlockId(8)};
  // Two requests hit the same two idle blocks and need one block more each.
  WaitingView a = waiting(40, 2);
  a.idle_hits_begin = 0;
  a.num_idle_hits = 2;
  WaitingView b = a;
  q.wait = {a, b};
  EXPECT_EQ(q.plan().num_admissions, 2);  // 3 - 2 revived = 1 >= 1 for each

  q.free = 2;  // 2 - 2 revived = 0 < 1
  EXPECT_EQ(q.plan().num_admissions, 0);
}

TEST(PlanTick, ARequestWaitsWhileAnotherComputesItsFirstBlock) {
  Queues q;
  const BlockKey shared{1, 2};
  RunningView r = running(1, 1);
  r.computing_first_block = shared;
  q.run = {r};
  WaitingView w = waiting(40);
  w.first_block = shared;
  q.wait = {w, waiting(20)};
  EXPECT_EQ(q.plan().num_admissions, 0);  // and FCFS holds the one behind it

  w.may_share_first_block = false;  // it wants prompt logprobs: computes its own
  q.wait = {w, waiting(20)};
  EXPECT_EQ(q.plan().num_admissions, 2);
}

TEST(PlanTick, OfTwoRequestsWithOneFirstBlockOnlyTheFirstIsAdmitted) {
  Queues q;
  WaitingView w = waiting(40);
  w.first_block = BlockKey{3, 4};
  q.wait = {w, w};
  EXPECT_EQ(q.plan().num_admissions, 1);

  w.hit_blocks = 1;  // already cached: nobody computes it, both go
  q.wait = {w, w};
  EXPECT_EQ(q.plan().num_admissions, 2);
}

TEST(PlanTick, DecodeRowsGetTheirBlocksBeforeAnyAdmission) {
  Queues q;
  q.free = 3;
  q.run = {running(1, 1, true), running(2, 2, true)};
  q.wait = {waiting(20)};  // needs 2 blocks, only 1 left after the decode rows
  const TickPlan p = q.plan();
  EXPECT_EQ(p.num_admissions, 0);
  EXPECT_TRUE(p.victims.empty());
}

TEST(PlanTick, ThePoolRunningDryPreemptsTheLatestAdmittedAndAdmitsNothing) {
  Queues q;
  q.free = 1;
  q.run = {running(1, 1, true, 2), running(2, 3, true, 2), running(3, 2, true, 2)};
  q.wait = {waiting(5)};
  const TickPlan p = q.plan();
  ASSERT_EQ(p.victims.size(), 1u);
  EXPECT_EQ(p.victims[0], SeqId(2));  // admitted last; its 2 blocks cover the other two
  EXPECT_EQ(p.num_admissions, 0);
  EXPECT_EQ(p.num_resumes, 0);
}

TEST(PlanTick, PreemptsUntilTheDecodeRowsFitCountingOnlyBlocksTheVictimHoldsAlone) {
  Queues q;
  q.free = 0;
  // The latest (3) shares its blocks with others: preempting it frees none,
  // and its own need goes away; then 2 goes.
  q.run = {running(1, 1, true, 3), running(2, 2, true, 1), running(3, 3, true, 0)};
  const TickPlan p = q.plan();
  EXPECT_EQ(p.victims, (std::vector<SeqId>{SeqId(3), SeqId(2)}));
  EXPECT_FALSE(p.cut_short.has_value());
}

TEST(PlanTick, AResumedSequenceIsPassedOverWhileImmune) {
  Queues q;
  q.free = 0;
  RunningView resumed = running(3, 3, true, 2);
  resumed.num_output_tokens = 10;
  resumed.immune_until_tokens = 10 + PREEMPT_IMMUNITY_TOKENS;
  q.run = {running(1, 1, true, 2), running(2, 2, true, 2), resumed};
  EXPECT_EQ(q.plan().victims, (std::vector<SeqId>{SeqId(2)}));
}

TEST(PlanTick, ASequenceAloneThatOutgrowsThePoolIsCutShort) {
  Queues q;
  q.free = 0;
  q.run = {running(1, 1, true, 16)};
  const TickPlan p = q.plan();
  EXPECT_TRUE(p.victims.empty());
  EXPECT_EQ(p.cut_short, SeqId(1));
}

TEST(PlanTick, FinishedSequencesAreNeitherVictimsNorNeedBlocks) {
  Queues q;
  q.free = 0;
  RunningView done = running(2, 2, true, 4);
  done.finished = true;
  q.run = {running(1, 1, false), done};
  const TickPlan p = q.plan();
  EXPECT_TRUE(p.victims.empty());
  EXPECT_FALSE(p.cut_short.has_value());
}

TEST(PlanTick, SwappedSequencesResumeFirstEachWithABlockToGrowInto) {
  Queues q;
  q.free = 6;
  q.swapped = {SwappedView{3}, SwappedView{3}};
  q.wait = {waiting(5)};
  TickPlan p = q.plan();
  EXPECT_EQ(p.num_resumes, 1);     // 3 + 1 fit, then 3 left < 3 + 1
  EXPECT_EQ(p.num_admissions, 0);  // a swapped sequence still waits: it goes first

  q.free = 7;
  p = q.plan();
  EXPECT_EQ(p.num_resumes, 2);
  EXPECT_EQ(p.num_admissions, 1);  // the last free block
}

TEST(PlanTick, AdmissionsWaitATickWhenResumesCouldEvictACachedBlock) {
  Queues q;
  q.free = 7;
  q.unkeyed = 5;  // the resumes' 6 blocks would evict a cached one
  q.swapped = {SwappedView{3}, SwappedView{3}};
  q.wait = {waiting(5)};
  const TickPlan p = q.plan();
  EXPECT_EQ(p.num_resumes, 2);
  EXPECT_EQ(p.num_admissions, 0);
}

TEST(PlanTick, NoSlotsNoAdmissions) {
  Queues q;
  q.run = {running(1, 1), running(2, 2), running(3, 3), running(4, 4)};
  q.wait = {waiting(5)};
  q.swapped = {SwappedView{1}};
  const TickPlan p = q.plan();
  EXPECT_EQ(p.num_resumes, 0);
  EXPECT_EQ(p.num_admissions, 0);
}

// A first chunk of 64 tokens needs 4 blocks; with a window of 20 the
// sequence needs only the 3 its window straddles (its chunks then take what
// is free, and the blocks behind the window come back as they go).
TEST(PlanTick, WithASlidingWindowAFirstChunkNeedsNoMoreBlocksThanTheWindow) {
  Queues q;
  q.free = 3;
  q.wait = {waiting(900)};
  EXPECT_EQ(q.plan().num_admissions, 0);
  q.kv_window = 20;
  EXPECT_EQ(q.plan().num_admissions, 1);
  q.free = 2;
  EXPECT_EQ(q.plan().num_admissions, 0);
}

}  // namespace
}  // namespace met
