// Tests for WorkerPool: every thread runs each job once with its own index,
// barriers order the phases of a job, split() covers [0, n) exactly in
// aligned chunks, jobs can be run many times in a row, and submit() returns
// while the job is still running.
#include "backend/cpu/worker_pool.h"

#include <gtest/gtest.h>

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

// Dynamic shares: every chunk goes to exactly one thread, round after
// round (reset before a barrier, claimed after it), and a thread held up
// (here: asleep while the others work) leaves its chunks to the others.
TEST(WorkerPool, ClaimsGiveEveryChunkToOneThreadAndTheSlowOneTakesFewer) {
  constexpr int kThreads = 3;
  constexpr int64_t kChunks = 40;
  WorkerPool pool(kThreads);
  for (int round = 0; round < 5; ++round) {
    std::vector<std::atomic<int>> owner(kChunks);
    for (auto& o : owner) o.store(-1);
    std::vector<int64_t> taken(kThreads, 0);
    pool.run([&](ThreadCtx& ctx) {
      if (ctx.ith() == 0) ctx.reset_claims();
      ctx.barrier();
      for (int64_t c = ctx.first_claim(); c < kChunks; c = ctx.next_claim()) {
        if (ctx.ith() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        int expected = -1;
        EXPECT_TRUE(owner[static_cast<size_t>(c)].compare_exchange_strong(expected, ctx.ith())) << c;
        ++taken[static_cast<size_t>(ctx.ith())];
      }
      ctx.barrier();
    });
    for (int64_t c = 0; c < kChunks; ++c) EXPECT_GE(owner[static_cast<size_t>(c)].load(), 0) << c;
    EXPECT_EQ(taken[0] + taken[1] + taken[2], kChunks);
    EXPECT_LT(taken[0], kChunks / kThreads) << "round " << round;
  }
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
