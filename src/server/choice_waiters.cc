// ChoiceWaiters. Tested through tests/server/serve_agent_test.cc.
#include "server/choice_waiters.h"

namespace met {

ChoiceWaiters::ChoiceWaiters(std::vector<RequestHandle> handles, const std::function<void()>& wake,
                             const std::function<void(size_t, const StreamEvent&)>& observe) {
  waiters_.reserve(handles.size());
  for (size_t i = 0; i < handles.size(); ++i) {
    waiters_.push_back(std::make_unique<RequestWaiter>(
        std::move(handles[i]), wake, [observe, i](const StreamEvent& e) { observe(i, e); }));
  }
}

bool ChoiceWaiters::has_events() {
  for (auto& w : waiters_) {
    if (w->has_events()) return true;
  }
  return false;
}

std::vector<ChoiceEvent> ChoiceWaiters::take() {
  std::vector<ChoiceEvent> out;
  for (size_t i = 0; i < waiters_.size(); ++i) {
    for (StreamEvent& e : waiters_[i]->take()) out.push_back(ChoiceEvent{i, std::move(e)});
  }
  return out;
}

void ChoiceWaiters::cancel() {
  for (auto& w : waiters_) w->cancel();
}

}  // namespace met
