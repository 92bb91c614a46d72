// RequestWaiter. Tested by tests/server/request_waiter_test.cc.
#include "server/request_waiter.h"

#include <utility>

namespace met {

RequestWaiter::RequestWaiter(RequestHandle handle, std::function<void()> wake,
                             std::function<void(const StreamEvent&)> observe)
    : handle_(std::move(handle)), wake_(std::move(wake)), observe_(std::move(observe)), thread_([this] { run(); }) {}

RequestWaiter::~RequestWaiter() {
  handle_.cancel();  // a no-op for a finished request
  if (thread_.joinable()) thread_.join();
}

void RequestWaiter::run() {
  StreamEvent event;
  while (handle_.next(event)) {
    if (observe_) observe_(event);
    {
      std::lock_guard<std::mutex> lock(mu_);
      events_.push_back(std::move(event));
    }
    wake_();
  }
}

bool RequestWaiter::has_events() {
  std::lock_guard<std::mutex> lock(mu_);
  return !events_.empty();
}

std::vector<StreamEvent> RequestWaiter::take() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<StreamEvent> out;
  out.reserve(events_.size());
  for (StreamEvent& e : events_) out.push_back(std::move(e));
  events_.clear();
  return out;
}

}  // namespace met
