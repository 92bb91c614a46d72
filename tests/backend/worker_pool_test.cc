// Tests for WorkerPool: every thread runs each job once with its own index,
// barriers order the phases of a job, split() covers [0, n) exactly in
// aligned chunks, jobs can be run many times in a row, and submit() returns
// while the job is still running.
#include "backend/cpu/worker_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace met::cpu {
namespace {

TEST(WorkerPool, EveryThreadRunsTheJobOnceWithItsIndex) {
  for (int num_threads : {1, 2, 3, 5}) {
    WorkerPool pool(num_threads);
    ASSERT_EQ(pool.num_threads(), num_threads);
    std::vector<std::atomic<int>> runs(static_cast<size_t>(num_threads));
    std::atomic<int> wrong_nth{0};
    pool.run([&](ThreadCtx& ctx) {
      runs[static_cast<size_t>(ctx.ith())].fetch_add(1);
      if (ctx.nth() != num_threads) wrong_nth.fetch_add(1);
    });
    for (int i = 0; i < num_threads; ++i) EXPECT_EQ(runs[static_cast<size_t>(i)].load(), 1) << i;
    EXPECT_EQ(wrong_nth.load(), 0);
  }
}

TEST(WorkerPool, BarriersOrderThePhasesOfAJob) {
  constexpr int kThreads = 3;
  constexpr int kPhases = 50;
  WorkerPool pool(kThreads);
  std::vector<std::atomic<int>> slots(kThreads);
  std::atomic<int> violations{0};
  pool.run([&](ThreadCtx& ctx) {
    for (int phase = 1; phase <= kPhases; ++phase) {
      slots[static_cast<size_t>(ctx.ith())].store(phase, std::memory_order_relaxed);
      ctx.barrier();
      // Every thread has written this phase and none has moved on yet.
      for (int t = 0; t < kThreads; ++t) {
        if (slots[static_cast<size_t>(t)].load(std::memory_order_relaxed) != phase) {
          violations.fetch_add(1);
        }
      }
      ctx.barrier();
    }
  });
  EXPECT_EQ(violations.load(), 0);
}

TEST(WorkerPool, SplitCoversTheRangeExactlyInAlignedChunks) {
  WorkerPool pool(1);
  for (int nth : {1, 2, 3, 4, 7}) {
    for (int64_t n : {0, 1, 5, 16, 17, 100, 1023, 4096}) {
      for (int64_t align : {1, 4, 16, 64}) {
        int64_t expected_begin = 0;
        for (int ith = 0; ith < nth; ++ith) {
          const auto [begin, end] = ThreadCtx(pool, ith, nth).split(n, align);
          EXPECT_EQ(begin, expected_begin) << n << " " << align << " " << ith << "/" << nth;
          EXPECT_LE(begin, end);
          if (begin < n) {
            EXPECT_EQ(begin % align, 0);
          }
          expected_begin = end;
        }
        EXPECT_EQ(expected_begin, n) << n << " " << align << " over " << nth;
      }
    }
  }
}

TEST(WorkerPool, SplitSharesWorkEvenly) {
  WorkerPool pool(1);
  for (int ith = 0; ith < 4; ++ith) {
    const auto [begin, end] = ThreadCtx(pool, ith, 4).split(1000, 1);
    EXPECT_EQ(end - begin, 250);
  }
}

// Guided shares: every row goes to exactly one thread, round after round
// (reset before a barrier, claimed after it), no range crosses a cap, each
// starts on a whole tile from the last cap, and a thread held up (here:
// asleep while the others work) leaves its rows to the others.
TEST(WorkerPool, ClaimedRangesCoverEveryRowOnceWithinCapsAndTheSlowThreadTakesFewer) {
  constexpr int kThreads = 3;
  constexpr int64_t kTotal = 1000, kTile = 16;
  const int64_t caps[] = {300, 712, kTotal};  // e.g. three products' ends
  const auto cap = [&](int64_t at) { return *std::upper_bound(std::begin(caps), std::end(caps), at); };
  WorkerPool pool(kThreads);
  for (int round = 0; round < 3; ++round) {
    std::vector<std::atomic<int>> owner(kTotal);
    for (auto& o : owner) o.store(-1);
    std::vector<int64_t> taken(kThreads, 0);
    pool.run([&](ThreadCtx& ctx) {
      if (ctx.ith() == 0) ctx.reset_claims();
      ctx.barrier();
      for (auto r = ctx.claim_range(kTotal, kTile, cap); r.first < r.second;
           r = ctx.claim_range(kTotal, kTile, cap)) {
        const auto [begin, end] = r;
        if (ctx.ith() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        const int64_t base = begin < caps[0] ? 0 : *(std::upper_bound(std::begin(caps), std::end(caps), begin) - 1);
        EXPECT_EQ((begin - base) % kTile, 0) << begin;
        EXPECT_LE(end, cap(begin)) << begin;
        for (int64_t row = begin; row < end; ++row) {
          int expected = -1;
          EXPECT_TRUE(owner[static_cast<size_t>(row)].compare_exchange_strong(expected, ctx.ith())) << row;
        }
        taken[static_cast<size_t>(ctx.ith())] += end - begin;
      }
      ctx.barrier();
    });
    for (int64_t row = 0; row < kTotal; ++row) EXPECT_GE(owner[static_cast<size_t>(row)].load(), 0) << row;
    EXPECT_EQ(taken[0] + taken[1] + taken[2], kTotal);
    EXPECT_LT(taken[0], kTotal / kThreads) << "round " << round;
  }
}

// Each range is a 1 / (2 nth) share of what is left, rounded up to whole
// tiles, so they shrink to a single tile at the end (one thread: halves).
TEST(WorkerPool, ClaimedRangesShrinkToOneTileAtTheEnd) {
  WorkerPool pool(1);
  std::vector<std::pair<int64_t, int64_t>> ranges;
  pool.run([&](ThreadCtx& ctx) {
    ctx.reset_claims();
    const auto cap = [](int64_t) { return int64_t{1000}; };
    for (auto r = ctx.claim_range(1000, 16, cap); r.first < r.second; r = ctx.claim_range(1000, 16, cap)) {
      ranges.push_back(r);
    }
  });
  // Left 1000: half is 500, up to tiles 512; left 488: 244 -> 256; 232:
  // 116 -> 128; 104: 52 -> 64; 40: 20 -> 32; 8: 4 -> one tile, cut at 1000.
  const std::vector<std::pair<int64_t, int64_t>> expected = {{0, 512},   {512, 768}, {768, 896},
                                                             {896, 960}, {960, 992}, {992, 1000}};
  EXPECT_EQ(ranges, expected);
}

TEST(WorkerPool, RunsManyJobsInARow) {
  WorkerPool pool(3);
  std::atomic<int64_t> total{0};
  for (int job = 0; job < 300; ++job) {
    pool.run([&](ThreadCtx& ctx) {
      total.fetch_add(ctx.ith() + 1);
      ctx.barrier();
    });
  }
  EXPECT_EQ(total.load(), 300 * (1 + 2 + 3));
}

TEST(WorkerPool, SubmitReturnsBeforeTheJobFinishes) {
  WorkerPool pool(2);
  std::atomic<bool> release{false};
  std::atomic<int> finished{0};
  pool.submit([&](ThreadCtx&) {
    while (!release.load(std::memory_order_acquire)) {
    }
    finished.fetch_add(1);
  });
  // The job cannot finish before release is set, so reaching here proves
  // submit did not wait for it.
  EXPECT_EQ(finished.load(), 0);
  release.store(true, std::memory_order_release);
  pool.wait();
  EXPECT_EQ(finished.load(), 2);
}

TEST(WorkerPool, WaitAfterAnIdlePeriodStillSeesTheJob) {
  WorkerPool pool(2);
  std::atomic<int> runs{0};
  for (int i = 0; i < 3; ++i) {
    // Let the workers fall asleep past their spin, then post again.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    pool.run([&](ThreadCtx&) { runs.fetch_add(1); });
  }
  EXPECT_EQ(runs.load(), 6);
}

}  // namespace
}  // namespace met::cpu
