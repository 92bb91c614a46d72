// Tests for core/mutex.h.
#include "core/mutex.h"

#include <gtest/gtest.h>

#include <thread>

namespace met {
namespace {

class Counter {
 public:
  void add() {
    MutexLock lock(mu_);
    ++n_;
    cv_.notify_all();
  }
  void wait_for(int n) {
    MutexLock lock(mu_);
    while (n_ < n) cv_.wait(mu_);
  }
  bool wait_until(int n, std::chrono::steady_clock::time_point deadline) {
    MutexLock lock(mu_);
    while (n_ < n) {
      if (!cv_.wait_until(mu_, deadline)) return n_ >= n;
    }
    return true;
  }

 private:
  Mutex mu_;
  CondVar cv_;
  int n_ GUARDED_BY(mu_) = 0;
};

TEST(Mutex, CondVarWakesAWaiterOnAnotherThread) {
  Counter c;
  std::thread t([&] {
    for (int i = 0; i < 100; ++i) c.add();
  });
  c.wait_for(100);
  t.join();
}

TEST(Mutex, WaitUntilGivesUpAtTheDeadline) {
  Counter c;
  EXPECT_FALSE(c.wait_until(1, std::chrono::steady_clock::now() + std::chrono::milliseconds(5)));
  c.add();
  EXPECT_TRUE(c.wait_until(1, std::chrono::steady_clock::now() + std::chrono::milliseconds(5)));
}

TEST(Mutex, TryLockFailsWhileHeld) {
  Mutex mu;
  mu.lock();
  std::thread t([&] { EXPECT_FALSE(mu.try_lock()); });
  t.join();
  mu.unlock();
  if (mu.try_lock()) {
    mu.unlock();
  } else {
    ADD_FAILURE() << "try_lock failed on a free mutex";
  }
}

}  // namespace
}  // namespace met
