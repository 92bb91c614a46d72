// WorkerPool: the CPU backend's persistent compute threads. A job runs on all
// of them at once (thread i of n), in lockstep through ThreadCtx::barrier(),
// the way a forward pass splits each op by rows. submit() returns at once so
// the engine thread can do host work while the step computes; wait() blocks
// until the job is done. Idle workers spin briefly, then sleep on a futex-like
// condition, so an idle server costs no CPU.
// Invariants: one job at a time; every thread of a job reaches every barrier
// the same number of times.
// With a PhaseProfile set, thread 0 times each phase between barriers.
// Threading: submit/wait from one owner thread; the job's body runs on the
// workers. Tested by tests/backend/worker_pool_test.cc.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <utility>
#include <vector>

#include "backend/cpu/phase_profile.h"
#include "core/mutex.h"

namespace met::cpu {

class ThreadCtx;

class WorkerPool {
 public:
  using Job = std::function<void(ThreadCtx&)>;

  explicit WorkerPool(int num_threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int num_threads() const { return static_cast<int>(threads_.size()); }

  // REQUIRES: no job in flight.
  void submit(Job job);
  // Times every later job's phases into `profile` (null: none), which must
  // outlive the pool or a later set_phase_profile(nullptr).
  // REQUIRES: no job in flight.
  void set_phase_profile(PhaseProfile* profile) { profile_ = profile; }
  // Blocks until the submitted job has finished on every thread.
  void wait();
  // submit + wait.
  void run(Job job) {
    submit(std::move(job));
    wait();
  }

 private:
  friend class ThreadCtx;
  void worker_main(int ith);
  void barrier_wait();

  std::vector<std::thread> threads_;
  Job job_;  // written under mu_ before generation_ bumps; read by workers after they see it
  Mutex mu_;
  CondVar cv_;
  uint64_t generation_ GUARDED_BY(mu_) = 0;  // bumps when a job is posted
  bool stop_ GUARDED_BY(mu_) = false;
  std::atomic<int> running_{0};      // threads still inside the current job
  std::atomic<uint64_t> posted_{0};  // generation visible to spinning workers
  PhaseProfile* profile_ = nullptr;  // set between jobs; read by thread 0 of a job
  // The cursor of ThreadCtx::claim_range.
  std::atomic<int64_t> claims_{0};
  // Sense-reversing barrier.
  std::atomic<int> barrier_count_{0};
  std::atomic<uint32_t> barrier_sense_{0};
};

class ThreadCtx {
 public:
  ThreadCtx(WorkerPool& pool, int ith, int nth) : pool_(pool), ith_(ith), nth_(nth) {}
  int ith() const { return ith_; }
  int nth() const { return nth_; }
  // Waits until every thread of the job has reached this barrier. `where`
  // names the phase it ends in a PhaseProfile.
  void barrier(const CallSite& where = CallSite::here()) {
    PhaseProfile* profile = ith_ == 0 ? pool_.profile_ : nullptr;
    if (profile == nullptr) {
      pool_.barrier_wait();
      return;
    }
    const PhaseProfile::Clock::time_point arrived = PhaseProfile::Clock::now();
    pool_.barrier_wait();
    profile->end_phase(where, arrived, PhaseProfile::Clock::now());
  }
  // This thread's share [begin, end) of n items, split evenly in chunks that
  // are multiples of `align` (the last may be short).
  std::pair<int64_t, int64_t> split(int64_t n, int64_t align = 1) const;

  // Guided shares, for work a core the host slows down should take less
  // of: a shared cursor over [0, total) hands each call the next range of
  // what is left, a 1 / (2 nth) share of it rounded up to whole `tile`s (at
  // least one), cut at cap(begin) (the first boundary past begin a range
  // must not cross; total or less). Ranges shrink as the work runs out, so
  // the threads finish within about one tile of each other (equal chunks
  // left up to a chunk's time, long enough for the waiting thread to fall
  // asleep in the barrier and the wake-up to delay the next op); a range
  // starts on a multiple of `tile` from the last cap it met. Returns
  // {total, total} once everything is claimed. Protocol: one thread calls
  // reset_claims() before a barrier that precedes every claim, and the
  // claiming ends with a barrier before the next reset.
  // REQUIRES: tile > 0; begin < cap(begin) <= total.
  template <typename Cap>
  std::pair<int64_t, int64_t> claim_range(int64_t total, int64_t tile, Cap cap) {
    int64_t begin = pool_.claims_.load(std::memory_order_relaxed);
    while (begin < total) {
      const int64_t share = (total - begin + 2 * nth_ - 1) / (2 * nth_);
      const int64_t end = std::min(cap(begin), begin + std::max<int64_t>(1, (share + tile - 1) / tile) * tile);
      if (pool_.claims_.compare_exchange_weak(begin, end, std::memory_order_relaxed)) return {begin, end};
    }
    return {total, total};
  }
  void reset_claims() { pool_.claims_.store(0, std::memory_order_relaxed); }

 private:
  WorkerPool& pool_;
  int ith_;
  int nth_;
};

}  // namespace met::cpu
