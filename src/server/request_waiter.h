// RequestWaiter: one thread per in-flight request that blocks on its
// RequestHandle (next()) and queues each event for the HTTP session, calling
// `wake` after every push so the session (on its strand) takes them. The
// engine thread never waits for a client: its ResponseStream is unbounded and
// only this thread pops it.
// Invariants: events come out of take() in the engine's order; the thread
// ends right after the terminal event; the destructor cancels the request
// and joins, so `wake` is never called after it returns.
// Threading: the waiter thread pops and pushes; take/has_events/cancel from
// the session (any one thread at a time); `observe` (optional) sees each
// event on the waiter thread as it leaves the engine's stream, before it is
// queued (RequestTimer stamps it there). Tested by
// tests/server/request_waiter_test.cc.
#pragma once

#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/engine.h"

namespace met {

class RequestWaiter {
 public:
  // Starts the thread. `wake` and `observe` run on it; they must be cheap
  // and not block.
  RequestWaiter(RequestHandle handle, std::function<void()> wake,
                std::function<void(const StreamEvent&)> observe = nullptr);
  ~RequestWaiter();
  RequestWaiter(const RequestWaiter&) = delete;
  RequestWaiter& operator=(const RequestWaiter&) = delete;

  bool has_events();
  // Every event queued so far, in order.
  std::vector<StreamEvent> take();
  // The engine answers with an error frame at its next tick.
  void cancel() { handle_.cancel(); }

 private:
  void run();

  RequestHandle handle_;
  std::function<void()> wake_;
  std::function<void(const StreamEvent&)> observe_;
  std::mutex mu_;
  std::deque<StreamEvent> events_;  // guarded by mu_
  std::thread thread_;              // last: started once the rest exists
};

}  // namespace met
