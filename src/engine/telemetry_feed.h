// TelemetryFeed: the engine's telemetry stream (GET /v1/telemetry). The
// engine thread stages records during a tick, only while someone subscribes,
// and hands them over once per tick under one lock into a ring of the last
// `capacity` records; each subscriber reads from its own cursor at its own
// pace, and one that falls more than the ring behind is told how many
// records it missed.
// Invariants: records are numbered 1, 2, ... in the order they were staged;
// a reader gets each record at most once, in order; nothing is staged (no
// cost but one relaxed load) while there is no subscriber.
// Threading: stage/flush on the engine thread; subscribe/read and the
// Subscription from any thread. Tested by tests/engine/telemetry_feed_test.cc.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/mutex.h"
#include "engine/engine_view.h"

namespace met {

class TelemetryFeed {
 public:
  static constexpr size_t kDefaultCapacity = 16384;
  explicit TelemetryFeed(size_t capacity = kDefaultCapacity) : capacity_(capacity) {}

  // A subscriber's place in the stream; unsubscribes when destroyed.
  class Subscription {
   public:
    Subscription(TelemetryFeed& feed, uint64_t next) : feed_(&feed), next_(next) {}
    Subscription(Subscription&& o) noexcept : feed_(o.feed_), next_(o.next_) { o.feed_ = nullptr; }
    Subscription& operator=(Subscription&&) = delete;
    Subscription(const Subscription&) = delete;
    ~Subscription();
    // Appends the records after the last one read (at most max_records) to
    // `out`; returns how many were lost to the ring's bound since then.
    uint64_t read(std::vector<TelemetryRecord>& out, size_t max_records);

   private:
    TelemetryFeed* feed_;
    uint64_t next_;  // the seq of the next record to read
  };

  // Starts at the next record staged from now on.
  Subscription subscribe();
  bool has_subscribers() const { return num_subscribers_.load(std::memory_order_relaxed) > 0; }

  // Engine thread. REQUIRES for stage: has_subscribers() (else it is wasted work).
  void stage(int64_t unix_ms, StepTelemetry step);
  void stage(int64_t unix_ms, RequestTelemetry request);
  void flush();

 private:
  const size_t capacity_;
  std::atomic<int32_t> num_subscribers_{0};
  std::vector<TelemetryRecord> staged_;  // engine thread
  Mutex mu_;
  std::vector<TelemetryRecord> ring_ GUARDED_BY(mu_);  // record seq s at (s - 1) % capacity
  uint64_t last_seq_ GUARDED_BY(mu_) = 0;              // the newest record's seq (0: none yet)
};

}  // namespace met
