// ChoiceWaiters: the RequestWaiters of one HTTP request's n choices (each
// choice is its own engine request), seen as one queue of (choice, event).
// Invariants: events of one choice come out in the engine's order; the
// destructor cancels and joins every waiter, so no wake runs after it.
// Threading: as RequestWaiter: take/has_events/cancel from the session's
// strand; each waiter thread calls `wake` and its choice's `observe`.
// Tested through `met serve` by tests/server/serve_agent_test.cc.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "server/request_waiter.h"

namespace met {

struct ChoiceEvent {
  size_t index = 0;
  StreamEvent event;
};

class ChoiceWaiters {
 public:
  // One waiter per handle; observe(i, event) sees choice i's events on its
  // waiter thread.
  ChoiceWaiters(std::vector<RequestHandle> handles, const std::function<void()>& wake,
                const std::function<void(size_t, const StreamEvent&)>& observe);

  size_t size() const { return waiters_.size(); }
  bool has_events();
  std::vector<ChoiceEvent> take();
  void cancel();

 private:
  std::vector<std::unique_ptr<RequestWaiter>> waiters_;
};

}  // namespace met
