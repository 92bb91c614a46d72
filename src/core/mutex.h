// Mutex, MutexLock and CondVar: std::mutex and std::condition_variable with
// clang's thread-safety attributes, so members marked GUARDED_BY(mu_) are
// checked by the compiler (-Wthread-safety, on in every clang build; -Werror
// in CI's clang build). The macros expand to nothing under other compilers.
// Threading: as std::mutex. Tested by tests/core/mutex_test.cc.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define MET_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define MET_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(x) MET_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY MET_THREAD_ANNOTATION(scoped_lockable)
#define GUARDED_BY(x) MET_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) MET_THREAD_ANNOTATION(pt_guarded_by(x))
#define REQUIRES(...) MET_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define EXCLUDES(...) MET_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define ACQUIRE(...) MET_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) MET_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) MET_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define NO_THREAD_SAFETY_ANALYSIS MET_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace met {

class CAPABILITY("mutex") Mutex {
 public:
  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  bool try_lock() TRY_ACQUIRE(true) { return mu_.try_lock(); }

 private:
  friend class CondVar;
  std::mutex mu_;
};

class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() RELEASE() { mu_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mu_;
};

// Waits release `mu` while blocked and hold it again when they return; the
// caller loops on its own condition (spurious wake-ups happen).
class CondVar {
 public:
  void wait(Mutex& mu) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }
  // False when `deadline` passed.
  bool wait_until(Mutex& mu, std::chrono::steady_clock::time_point deadline) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    const bool woken = cv_.wait_until(lock, deadline) == std::cv_status::no_timeout;
    lock.release();
    return woken;
  }
  void notify_one() { cv_.notify_one(); }
  void notify_all() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace met
