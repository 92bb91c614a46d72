// WorkerPool: the CPU backend's persistent compute threads. A job runs on all
// of them at once (thread i of n), in lockstep through ThreadCtx::barrier(),
// the way a forward pass splits each op by rows. submit() returns at once so
// the engine thread can do host work while the step computes; wait() blocks
// until the job is done. Idle workers spin briefly, then sleep on a futex-like
// condition, so an idle server costs no CPU.
// Invariants: one job at a time; every thread of a job reaches every barrier
// the same number of times.
// Threading: submit/wait from one owner thread; the job's body runs on the
// workers. Tested by tests/backend/worker_pool_test.cc.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

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
  // Chunks claimed past each thread's first (ThreadCtx::next_claim).
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
  // Waits until every thread of the job has reached this barrier.
  void barrier() { pool_.barrier_wait(); }
  // This thread's share [begin, end) of n items, split evenly in chunks that
  // are multiples of `align` (the last may be short).
  std::pair<int64_t, int64_t> split(int64_t n, int64_t align = 1) const;

  // Dynamic shares, for work a core the host slows down should take less
  // of: chunks 0, 1, ... of a shared pool go to whichever thread gets to
  // them. Each thread starts at chunk first_claim() (its own), then takes
  // next_claim() until past the last chunk. Protocol: one thread calls
  // reset_claims() before a barrier that precedes every claim, and the
  // claiming ends with a barrier before the next reset.
  int64_t first_claim() const { return ith_; }
  int64_t next_claim() { return nth_ + pool_.claims_.fetch_add(1, std::memory_order_relaxed); }
  void reset_claims() { pool_.claims_.store(0, std::memory_order_relaxed); }

 private:
  WorkerPool& pool_;
  int ith_;
  int nth_;
};

}  // namespace met::cpu
