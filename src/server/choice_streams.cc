// ChoiceStreams. Tested by tests/server/choice_streams_test.cc.
#include "server/choice_streams.h"

#include <utility>

namespace met {

ChoiceStreams::ChoiceStreams(std::vector<RequestHandle> handles, const std::function<void()>& wake,
                             std::function<void(size_t, const StreamEvent&)> observe)
    : handles_(std::move(handles)), observe_(std::move(observe)) {
  for (RequestHandle& h : handles_) h.set_waker(wake);
}

ChoiceStreams::~ChoiceStreams() {
  for (RequestHandle& h : handles_) {
    h.clear_waker();
    h.cancel();  // a no-op for a finished request
  }
}

bool ChoiceStreams::has_events() {
  for (RequestHandle& h : handles_) {
    if (h.has_events()) return true;
  }
  return false;
}

std::vector<ChoiceEvent> ChoiceStreams::take() {
  std::vector<ChoiceEvent> out;
  for (size_t i = 0; i < handles_.size(); ++i) {
    scratch_.clear();
    handles_[i].take(scratch_);
    for (StreamEvent& e : scratch_) {
      if (observe_) observe_(i, e);
      out.push_back(ChoiceEvent{i, std::move(e)});
    }
  }
  return out;
}

void ChoiceStreams::cancel() {
  for (RequestHandle& h : handles_) h.cancel();
}

}  // namespace met
