// ResponseStream: one request's events between the engine thread and the
// client that reads them (an HTTP connection's strand, `met run`, a test).
// The engine stages events without a lock and publishes each stream at most
// once per tick (StreamPublisher): one lock, the staged events appended to
// the client's queue, and one wake-up: the client's waker if it set one (the
// server posts to the connection's strand), else a condition variable for a
// client blocked in pop(). No thread waits per request.
// Unsent bytes: what is published and not yet taken by the client; a client
// that keeps more than StreamLimits::max_pending_bytes unsent for
// slow_client_timeout is cut off (the stream is cancelled with a reason the
// engine sends as its error frame). The bytes can pass the bound by what the
// request generates within that timeout, no more.
// Storage: staged and published events live in slots that are reused (a
// delta is copied into a slot that held one, so its vectors and string keep
// their capacity; the client copies an event out), so a steady stream costs
// the engine thread no allocation per token once the slots are warm.
// Invariants: events come out in the order staged; nothing is taken after
// the terminal event; the waker runs under the stream's lock, so once
// clear_waker() returns it never runs again.
// Threading: stage/publish/has_staged on the engine thread; the client side
// (pop, take, wakers, cancel) from one client thread at a time; the queue is
// guarded by mu_. Tested by tests/request/response_stream_test.cc.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/mutex.h"
#include "request/stream_event.h"

namespace met {

struct StreamLimits {
  size_t max_pending_bytes = size_t{1} << 20;  // unsent bytes a client may hold
  Duration slow_client_timeout = std::chrono::seconds(30);  // how long it may hold more
};

enum class PublishOutcome : uint8_t {
  kPublished,
  kCutOff,  // the client stayed over the bound too long: the stream is cancelled now
};

class ResponseStream {
 public:
  // Warms a few slots on the creating thread, so a client that stays within
  // kWarmSlots events of the engine costs the engine thread no allocation.
  ResponseStream();

  // --- The engine's side (engine thread only).
  void stage(const DeltaEvent& delta);
  void stage(StreamEvent event);
  bool has_staged() const { return num_staged_ > 0; }
  // Hands the staged events to the client (one lock, one wake-up) and checks
  // the unsent-bytes bound at `now`.
  PublishOutcome publish(TimePoint now, const StreamLimits& limits);
  // stage() then publish() with no bound: for sinks that have no publisher.
  void push(StreamEvent event);
  // Set while the stream waits in a publisher's batch (StreamPublisher).
  bool awaiting_publish = false;

  // --- The client's side.
  // Blocks until an event is there; false once the terminal event was taken.
  bool pop(StreamEvent& out);
  // As pop, but gives up after `timeout` (returns false with `out` untouched).
  bool pop_for(StreamEvent& out, std::chrono::milliseconds timeout);
  bool has_events();
  // Appends every published event to `out`, in order; none after the terminal one.
  void take(std::vector<StreamEvent>& out);
  // `waker` runs (on the engine thread, under this stream's lock: it must be
  // cheap and must not block or call back into the stream) after each
  // publish, and at once if events are already waiting.
  void set_waker(std::function<void()> waker);
  void clear_waker();
  // The engine answers with an error frame saying `reason` at its next tick.
  void cancel(std::string reason = "cancelled by the client");
  bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }
  std::string cancel_reason();
  size_t unsent_bytes();

 private:
  bool ready() const REQUIRES(mu_) { return num_events_ > 0; }
  void pop_front(StreamEvent& out) REQUIRES(mu_);
  // Copies (a delta) or moves (a terminal event) `e` to the back of the ring.
  void push_back_event(StreamEvent& e) REQUIRES(mu_);
  void check_bound(TimePoint now, const StreamLimits& limits, PublishOutcome& outcome) REQUIRES(mu_);
  StreamEvent& next_staged_slot();

  static constexpr size_t kWarmSlots = 8;

  // Engine thread only: slots [0, num_staged_) are staged.
  std::vector<StreamEvent> staged_;
  size_t num_staged_ = 0;
  size_t staged_bytes_ = 0;

  Mutex mu_;
  CondVar cv_;
  // Published and not yet taken: a ring of slots, num_events_ of them from head_.
  std::vector<StreamEvent> events_ GUARDED_BY(mu_);
  size_t head_ GUARDED_BY(mu_) = 0;
  size_t num_events_ GUARDED_BY(mu_) = 0;
  size_t unsent_bytes_ GUARDED_BY(mu_) = 0;
  std::optional<TimePoint> over_since_ GUARDED_BY(mu_);  // when unsent_bytes_ went over the bound
  size_t bound_bytes_ GUARDED_BY(mu_) = SIZE_MAX;        // the bound of the last publish
  bool terminal_taken_ GUARDED_BY(mu_) = false;
  int32_t num_blocked_ GUARDED_BY(mu_) = 0;  // clients waiting in pop
  std::function<void()> waker_ GUARDED_BY(mu_);
  std::string cancel_reason_ GUARDED_BY(mu_);
  std::atomic<bool> cancelled_{false};
};

}  // namespace met
