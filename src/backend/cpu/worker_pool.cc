// WorkerPool. Tested by tests/backend/worker_pool_test.cc.
#include "backend/cpu/worker_pool.h"

#include <algorithm>

#include "core/check.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define MET_CPU_RELAX() _mm_pause()
#else
#define MET_CPU_RELAX() ((void)0)
#endif

namespace met::cpu {
namespace {
// Spins before sleeping: about 10 us of pause on Zen 5 (~43 ns each), enough
// to catch a partner that arrives with the balanced ops of a forward pass.
// Longer spins hurt on a shared machine: when a worker and its partner share
// a core, the spinner keeps the partner off it. Measured there (2 cores, 3+
// other busy processes; bench/backend/worker_pool_bench.cc), a 2-thread
// barrier cost 50 us with 2048 spins, 8 us with 256, 3 us with 64, 785 us
// with 32768; `met bench` decode at 2 threads went from 24 to 51 tok/s.
constexpr int kSpinIterations = 256;
}  // namespace

WorkerPool::WorkerPool(int num_threads) {
  MET_CHECK(num_threads >= 1, "a worker pool needs at least one thread, got {}", num_threads);
  threads_.reserve(static_cast<size_t>(num_threads));
  for (int i = 0; i < num_threads; ++i) threads_.emplace_back([this, i] { worker_main(i); });
}

WorkerPool::~WorkerPool() {
  {
    MutexLock lock(mu_);
    stop_ = true;
    ++generation_;
    posted_.store(generation_, std::memory_order_release);
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void WorkerPool::submit(Job job) {
  MET_CHECK(running_.load(std::memory_order_acquire) == 0, "WorkerPool: a job is already in flight");
  {
    MutexLock lock(mu_);
    job_ = std::move(job);
    running_.store(num_threads(), std::memory_order_release);
    ++generation_;
    posted_.store(generation_, std::memory_order_release);
  }
  cv_.notify_all();
}

void WorkerPool::wait() {
  for (int i = 0; i < kSpinIterations; ++i) {
    if (running_.load(std::memory_order_acquire) == 0) return;
    MET_CPU_RELAX();
  }
  MutexLock lock(mu_);
  while (running_.load(std::memory_order_acquire) != 0) cv_.wait(mu_);
}

void WorkerPool::worker_main(int ith) {
  uint64_t seen = 0;
  for (;;) {
    bool have = false;
    for (int i = 0; i < kSpinIterations && !have; ++i) {
      have = posted_.load(std::memory_order_acquire) != seen;
      if (!have) MET_CPU_RELAX();
    }
    {
      MutexLock lock(mu_);
      while (generation_ == seen) cv_.wait(mu_);
      seen = generation_;
      if (stop_) return;
    }
    ThreadCtx ctx(*this, ith, num_threads());
    PhaseProfile* profile = ith == 0 ? profile_ : nullptr;
    if (profile != nullptr) profile->begin_job(PhaseProfile::Clock::now());
    job_(ctx);
    if (profile != nullptr) profile->end_job(PhaseProfile::Clock::now());
    if (running_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      MutexLock lock(mu_);
      cv_.notify_all();
    }
  }
}

void WorkerPool::barrier_wait() {
  const int n = num_threads();
  if (n == 1) return;
  const uint32_t sense = barrier_sense_.load(std::memory_order_acquire);
  if (barrier_count_.fetch_add(1, std::memory_order_acq_rel) == n - 1) {
    barrier_count_.store(0, std::memory_order_relaxed);
    barrier_sense_.store(sense + 1, std::memory_order_release);
    barrier_sense_.notify_all();
    return;
  }
  for (int i = 0; i < kSpinIterations; ++i) {
    if (barrier_sense_.load(std::memory_order_acquire) != sense) return;
    MET_CPU_RELAX();
  }
  // Sleep on the futex until the last thread flips the sense.
  while (barrier_sense_.load(std::memory_order_acquire) == sense) barrier_sense_.wait(sense);
}

std::pair<int64_t, int64_t> ThreadCtx::split(int64_t n, int64_t align) const {
  const int64_t units = (n + align - 1) / align;
  const int64_t per = units / nth_, extra = units % nth_;
  const int64_t begin_unit = ith_ * per + std::min<int64_t>(ith_, extra);
  const int64_t end_unit = begin_unit + per + (ith_ < extra ? 1 : 0);
  return {std::min(n, begin_unit * align), std::min(n, end_unit * align)};
}

}  // namespace met::cpu
