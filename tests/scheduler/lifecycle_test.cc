// Tests for scheduler/lifecycle.h, from the reference's own words.
#include "scheduler/lifecycle.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "scheduler/preempt.h"
#include "scheduler_fixture.h"

namespace met {
namespace {

using testing::make_prompt;

class Lifecycle : public ::testing::Test {
 protected:
  Lifecycle() : device_(options()), dev_(device_), kv_(device_) {
    Result<std::unique_ptr<SpillStore>> s = SpillStore::create(dir_.path());
    EXPECT_TRUE(s.ok());
    store_ = std::move(*s);
    spill_ = std::make_unique<testing::FaultySpillIo>(*store_);
  }

  static testing::FakeDeviceOptions options() {
    testing::FakeDeviceOptions o;
    o.num_kv_blocks = 32;
    return o;
  }

  SchedIo io() { return SchedIo{dev_, kv_, req_, tel_, clock_}; }

  // A sequence of `n` prompt tokens, all of them cached (as after prefill),
  // plus `out` output tokens.
  ActiveSeq make_seq(uint64_t id, int n, int out = 0) {
    ActiveSeq a;
    a.seq.id = SeqId(id);
    a.seq.tokens = make_prompt(n, static_cast<uint32_t>(id));
    a.out.prompt_len = n;
    for (int i = 0; i < out; ++i) {
      a.seq.tokens.push_back(50 + i);
      a.out.tokens.push_back(50 + i);
    }
    a.limits.remaining = 10;
    a.sink = ResponseSink(RequestId(id), nullptr);
    EXPECT_EQ(kv_.reserve(a.seq, static_cast<int32_t>(a.seq.tokens.size())), Admit::kNow);
    a.seq.seq_len = static_cast<int32_t>(a.seq.tokens.size());
    return a;
  }

  testing::TempDir dir_;
  testing::FakeDevice device_;
  DevPort dev_;
  KvManager kv_;
  testing::RecordingReq req_;
  testing::CountingTel tel_;
  FakeClock clock_;
  std::unique_ptr<SpillStore> store_;
  std::unique_ptr<testing::FaultySpillIo> spill_;
  SpillImage scratch_;
};

TEST_F(Lifecycle, FinishSequenceSendsTheFinalFrameCachesTheFullBlocksThenReleases) {
  ActiveSeq a = make_seq(1, 40, 2);
  finish_sequence(io(), a, 0);
  EXPECT_EQ(req_.at(1).finishes.size(), 1u);
  EXPECT_EQ(kv_.num_blocks_in_use(), 0);
  EXPECT_TRUE(a.seq.block_table.empty());
  // The two full blocks of prompt + output are findable now.
  SeqState again;
  again.tokens = make_prompt(40, 1);
  again.tokens.push_back(50);
  again.tokens.push_back(51);
  EXPECT_EQ(kv_.match_prefix(again).num_tokens, 32);
  kv_.apply(ReleaseSeq{&again, false, "test"});
}

TEST_F(Lifecycle, FinishSequenceReportsUsageAndTimings) {
  ActiveSeq a = make_seq(1, 20, 3);
  a.out.cached_prompt_tokens = 16;
  a.timing.request_start = clock_.now();
  clock_.advance(std::chrono::milliseconds(40));
  a.timing.decode_start = clock_.now();
  clock_.advance(std::chrono::milliseconds(60));
  finish_sequence(io(), a, 0);
  const FinishEvent& fe = req_.at(1).finishes.at(0);
  EXPECT_EQ(fe.usage.prompt_tokens, 20);
  EXPECT_EQ(fe.usage.completion_tokens, 3);
  EXPECT_EQ(fe.usage.cached_prompt_tokens, 16);
  EXPECT_DOUBLE_EQ(fe.time_to_first_token_ms, 40.0);
  EXPECT_DOUBLE_EQ(fe.decode_time_ms, 60.0);
  EXPECT_EQ(tel_.num_finished, 1);
}

TEST_F(Lifecycle, AFailedSequenceGetsAnErrorFrameAndIsNotCached) {
  ActiveSeq a = make_seq(2, 40);
  fail_sequence(a, "boom");
  EXPECT_TRUE(a.status.finished);
  finish_sequence(io(), a, 0);
  ASSERT_EQ(req_.at(2).errors.size(), 1u);
  EXPECT_EQ(req_.at(2).errors[0], "boom");
  EXPECT_TRUE(req_.at(2).finishes.empty());
  EXPECT_EQ(kv_.num_blocks_in_use(), 0);
  SeqState again;
  again.tokens = make_prompt(40, 2);
  EXPECT_EQ(kv_.match_prefix(again).num_tokens, 0);
}

TEST_F(Lifecycle, SendErrorReleasesWithoutCaching) {
  ActiveSeq a = make_seq(3, 40);
  send_error(io(), a, "bad");
  EXPECT_EQ(req_.at(3).errors.size(), 1u);
  EXPECT_EQ(kv_.num_blocks_in_use(), 0);
  EXPECT_EQ(kv_.prefix_cache().num_hit_tokens(), 0);
  SeqState again;
  again.tokens = make_prompt(40, 3);
  EXPECT_EQ(kv_.match_prefix(again).num_tokens, 0);
}

TEST_F(Lifecycle, SendErrorToSinkAnswersASinkWithNoSequence) {
  ResponseSink sink(RequestId(4), nullptr);
  send_error_to_sink(io(), sink, "refused");
  EXPECT_EQ(req_.at(4).errors.size(), 1u);
  EXPECT_TRUE(sink.is_terminated());
}

TEST_F(Lifecycle, SwapOutMovesTheLastRowIntoTheHoleAndCompactsItsSlot) {
  std::vector<ActiveSeq> active;
  for (uint64_t i = 0; i < 3; ++i) {
    active.push_back(make_seq(10 + i, 20));
    active.back().seq.slot_idx = static_cast<int32_t>(i);
  }
  Result<SwappedSeq> s = swap_out_sequence(io(), active, 0, *spill_, SpillId(1), scratch_);
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(active.size(), 2u);
  EXPECT_EQ(active[0].seq.id, SeqId(12));
  EXPECT_EQ(active[0].seq.slot_idx, 0);
  EXPECT_FALSE(s->a.seq.owns_slot);
  EXPECT_EQ(s->num_blocks, 2);
  EXPECT_EQ(s->seq_len, 20);
  EXPECT_TRUE(s->a.seq.block_table.empty());
  EXPECT_EQ(req_.at(10).num_terminal(), 0);
  for (ActiveSeq& a : active) send_error(io(), a, "done");
  // Resume, then everything is released again.
  Result<ActiveSeq> r = resume_swapped_seq(io(), std::move(*s), *spill_, scratch_);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->seq.seq_len, 20);
  EXPECT_EQ(r->seq.block_table.size(), 2u);
  EXPECT_TRUE(std::filesystem::is_empty(dir_.path()));
  send_error(io(), *r, "done");
  EXPECT_EQ(kv_.num_blocks_in_use(), 0);
}

TEST_F(Lifecycle, ASwapOutThatFailsAnswersTheVictimAndFreesItsBlocks) {
  std::vector<ActiveSeq> active;
  active.push_back(make_seq(20, 40));
  active.push_back(make_seq(21, 20));
  active[1].seq.slot_idx = 1;
  spill_->fail_call(0);  // the save
  Result<SwappedSeq> s = swap_out_sequence(io(), active, 0, *spill_, SpillId(1), scratch_);
  EXPECT_FALSE(s.ok());
  ASSERT_EQ(req_.at(20).errors.size(), 1u);
  EXPECT_NE(req_.at(20).errors[0].find("swap-out failed"), std::string::npos);
  ASSERT_EQ(active.size(), 1u);
  EXPECT_EQ(active[0].seq.slot_idx, 0);
  send_error(io(), active[0], "done");
  EXPECT_EQ(kv_.num_blocks_in_use(), 0);
}

TEST_F(Lifecycle, AResumeWhoseImageCannotBeReadAnswersTheClientAndRemovesTheImage) {
  std::vector<ActiveSeq> active;
  active.push_back(make_seq(30, 40));
  Result<SwappedSeq> s = swap_out_sequence(io(), active, 0, *spill_, SpillId(7), scratch_);
  ASSERT_TRUE(s.ok());
  spill_->fail_call(spill_->num_calls());  // the open
  Result<ActiveSeq> r = resume_swapped_seq(io(), std::move(*s), *spill_, scratch_);
  EXPECT_FALSE(r.ok());
  ASSERT_EQ(req_.at(30).errors.size(), 1u);
  EXPECT_NE(req_.at(30).errors[0].find("swap-in failed"), std::string::npos);
  EXPECT_EQ(kv_.num_blocks_in_use(), 0);
  EXPECT_TRUE(std::filesystem::is_empty(dir_.path()));
}

TEST_F(Lifecycle, AResumeWhoseImageCannotBeRemovedFreesTheRestoredBlocks) {
  std::vector<ActiveSeq> active;
  active.push_back(make_seq(31, 40));
  Result<SwappedSeq> s = swap_out_sequence(io(), active, 0, *spill_, SpillId(8), scratch_);
  ASSERT_TRUE(s.ok());
  spill_->fail_call(spill_->num_calls() + 1);  // open succeeds, remove fails
  Result<ActiveSeq> r = resume_swapped_seq(io(), std::move(*s), *spill_, scratch_);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(req_.at(31).errors.size(), 1u);
  EXPECT_EQ(kv_.num_blocks_in_use(), 0);
}

TEST_F(Lifecycle, AResumeWhoseBlocksCannotBeWrittenFreesThemAndRemovesTheImage) {
  std::vector<ActiveSeq> active;
  active.push_back(make_seq(32, 40));
  Result<SwappedSeq> s = swap_out_sequence(io(), active, 0, *spill_, SpillId(9), scratch_);
  ASSERT_TRUE(s.ok());
  device_.fail_every(testing::DeviceCall::kWriteKv);
  Result<ActiveSeq> r = resume_swapped_seq(io(), std::move(*s), *spill_, scratch_);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(req_.at(32).errors.size(), 1u);
  EXPECT_EQ(kv_.num_blocks_in_use(), 0);
  EXPECT_TRUE(std::filesystem::is_empty(dir_.path()));
}

TEST_F(Lifecycle, AResumedSequenceIsImmuneForTheImmunityTokensAndStartsClean) {
  std::vector<ActiveSeq> active;
  active.push_back(make_seq(33, 20, 5));
  active[0].status.guard_stop = GuardStop::kKvExhausted;
  Result<SwappedSeq> s = swap_out_sequence(io(), active, 0, *spill_, SpillId(10), scratch_);
  ASSERT_TRUE(s.ok());
  Result<ActiveSeq> r = resume_swapped_seq(io(), std::move(*s), *spill_, scratch_);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->queue.immune_until_tokens, 5 + PREEMPT_IMMUNITY_TOKENS);
  EXPECT_FALSE(r->status.finished);
  EXPECT_FALSE(r->status.guard_stop.has_value());
  EXPECT_FALSE(r->status.error.has_value());
  EXPECT_EQ(r->out.tokens.size(), 5u);
  send_error(io(), *r, "done");
}

// 80 tokens with a window of 40: the next query (position 80) reads 41..80,
// so blocks 0 (0..15) and 1 (16..31) are behind it and block 2 is not.
TEST_F(Lifecycle, ReleaseBehindWindowGivesBackExactlyTheBlocksNoLaterQueryReads) {
  ActiveSeq a = make_seq(40, 80);
  release_behind_window(io(), a.seq, 0);
  EXPECT_EQ(a.seq.num_released_blocks, 0);
  release_behind_window(io(), a.seq, 40);
  EXPECT_EQ(a.seq.num_released_blocks, 2);
  EXPECT_EQ(a.seq.block_table[1], kReleasedBlock);
  EXPECT_NE(a.seq.block_table[2], kReleasedBlock);
  EXPECT_EQ(kv_.num_blocks_in_use(), 3);
  finish_sequence(io(), a, 0);
  EXPECT_EQ(kv_.num_blocks_in_use(), 0);
}

TEST_F(Lifecycle, ASwapOutSavesOnlyTheLiveBlocksAndAResumeBringsTheReleasedOnesBackReleased) {
  std::vector<ActiveSeq> active;
  active.push_back(make_seq(41, 80));
  release_behind_window(io(), active[0].seq, 40);
  std::vector<uint8_t> before(static_cast<size_t>(device_.info().kv_block_bytes));
  for (size_t i = 0; i < before.size(); ++i) before[i] = static_cast<uint8_t>(3 * i + 2);
  ASSERT_TRUE(device_.write_kv_block(active[0].seq.block_table[4], before).ok());
  Result<SwappedSeq> s = swap_out_sequence(io(), active, 0, *spill_, SpillId(11), scratch_);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->num_blocks, 3);
  EXPECT_EQ(s->num_released_blocks, 2);
  EXPECT_EQ(scratch_.num_blocks, 3);
  EXPECT_EQ(kv_.num_blocks_in_use(), 0);
  Result<ActiveSeq> r = resume_swapped_seq(io(), std::move(*s), *spill_, scratch_);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->seq.seq_len, 80);
  ASSERT_EQ(r->seq.block_table.size(), 5u);
  EXPECT_EQ(r->seq.num_released_blocks, 2);
  EXPECT_EQ(r->seq.block_table[0], kReleasedBlock);
  EXPECT_EQ(kv_.num_blocks_in_use(), 3);
  std::vector<uint8_t> after(before.size());
  ASSERT_TRUE(device_.read_kv_block(r->seq.block_table[4], after).ok());
  EXPECT_EQ(after, before);
  send_error(io(), *r, "done");
  EXPECT_EQ(kv_.num_blocks_in_use(), 0);
}

TEST_F(Lifecycle, AResumeAfterReleasedBlocksWhoseBlocksCannotBeWrittenFreesEverything) {
  std::vector<ActiveSeq> active;
  active.push_back(make_seq(42, 80));
  release_behind_window(io(), active[0].seq, 40);
  Result<SwappedSeq> s = swap_out_sequence(io(), active, 0, *spill_, SpillId(12), scratch_);
  ASSERT_TRUE(s.ok());
  device_.fail_every(testing::DeviceCall::kWriteKv);
  Result<ActiveSeq> r = resume_swapped_seq(io(), std::move(*s), *spill_, scratch_);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(req_.at(42).errors.size(), 1u);
  EXPECT_EQ(kv_.num_blocks_in_use(), 0);
  EXPECT_TRUE(std::filesystem::is_empty(dir_.path()));
}

}  // namespace
}  // namespace met
